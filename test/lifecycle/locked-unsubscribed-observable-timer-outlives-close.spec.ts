import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Injectable()
class Feeds {
  /** Not declared as returning an Observable: the lock is taken at call time and held until a subscriber ends it. */
  @Locked('feed:<0>', { ttl: 400 })
  open(id: string): any {
    return of(id);
  }
}

/**
 * Found by review. docs/configuration.md, "Shutdown": "In `onApplicationShutdown` it stops its
 * timers and closes only the connections it opened". An undeclared Observable result of a
 * `@Locked` method (nobody subscribed yet) arms a ttl timer in `holdWhileSubscribed`
 * (lib/core/engine/locked-call.ts). app.close() gives the lock back, but nothing cancels that
 * timer: it outlives the application (holding the closed application's objects for a whole
 * ttl, which may be hours) and then fires into the closed application, logging a warning about
 * a lock released long ago and sending another release through the closed module.
 */
describe('an undeclared Observable of a @Locked method that nobody subscribed when the application closes', () => {
  const redis = useRedis();

  it('leaves no timer of the library running after app.close(): nothing is logged after close', async () => {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Feeds] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    const stream = (await moduleRef.get(Feeds).open('1')) as Observable<string>;
    expect(await redis.exists('lock:{feed:1}')).toBe(1);

    await moduleRef.close();
    // app.close() gave the lock back, as promised.
    expect(await redis.exists('lock:{feed:1}')).toBe(0);
    const linesAtClose = logs.lines.length;

    // Three times the lock's ttl after close: a timer stopped at close has nothing to say.
    await sleep(1_200);
    const afterClose = logs.lines.slice(linesAtClose).map((line) => `${line.level}: ${line.message}`);
    // Before the fix: "warn: Feeds.open: the Observable it returned was not subscribed within the lock's ttl (400 ms); lock "feed:1" released. ..."
    expect(afterClose).toEqual([]);
    void stream;
  });
});
