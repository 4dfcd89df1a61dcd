import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * docs/locks.md: an undeclared Observable result "if the lock is lost or the application shuts
 * down first, it ends then (no timer outlives app.close())". holdWhileSubscribed
 * (lib/core/engine/locked-call.ts) listens for the lock signal's 'abort' event, but an async
 * method returns its Observable after awaiting: when the lock's signal aborted before that
 * (here: at shutdown), the listener is added to an already-aborted signal and never fires, so
 * the ttl timer runs on after app.close() and then warns about a lock released long ago.
 */
@Injectable()
class Feeds {
  constructor(private readonly locks: LockService) {}

  @Locked('feed:<0>', { ttl: 400 })
  async open(id: string): Promise<any> {
    const { signal } = this.locks.current()!;
    // The method is still working when the application shuts down; it returns its stream then.
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return of(id);
  }
}

describe('an undeclared Observable an async @Locked method returns after its lock ended at shutdown', () => {
  const redis = useRedis();

  it('leaves no timer of the library running after app.close(): nothing is logged after close', async () => {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Feeds] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    const opened = moduleRef.get(Feeds).open('1') as Promise<Observable<string>>;
    for (let i = 0; i < 200 && (await redis.exists('lock:{feed:1}')) === 0; i++) await sleep(25);
    expect(await redis.exists('lock:{feed:1}')).toBe(1);

    await moduleRef.close();
    const stream = await opened;
    expect(await redis.exists('lock:{feed:1}')).toBe(0);
    const linesAtClose = logs.lines.length;

    // Three times the lock's ttl after close: a timer that ended with the lock has nothing to say.
    await sleep(1_200);
    const afterClose = logs.lines.slice(linesAtClose).map((line) => `${line.level}: ${line.message}`);
    expect(afterClose).toEqual([]);
    void stream;
  });
});
