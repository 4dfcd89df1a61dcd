import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LockService, RedisLockModule, WithoutOverlapping } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

let started!: () => void;
const running = new Promise<void>((resolve) => (started = resolve));

@Injectable()
class Export {
  constructor(private readonly locks: LockService) {}

  /** Stops as soon as its signal aborts (as a job should), handing back a stream nobody subscribes. */
  @WithoutOverlapping({ key: 'export-run', ttl: '1m' })
  async run(): Promise<Observable<number>> {
    const { signal } = this.locks.current()!;
    started();
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return of(1, 2, 3);
  }
}

/**
 * JobLockOrchestrator.holdWhileSubscribed (lib/scheduling/job-lock.orchestrator.ts) ends an
 * unsubscribed run on its lock signal's 'abort' event, so that shutdown does not wait for it.
 * A job method that returns its Observable (through a Promise) right after that signal aborted
 * at shutdown, as a well-behaved job does, registers the listener on an already-aborted signal:
 * it never fires, the run counts as running until its ttl, and app.close() sits out the whole
 * shutdownTimeout and logs a false "was still running".
 */
describe('app.close() while a job is running that returns an Observable once its signal aborts', () => {
  const redis = useRedis();

  it('ends the unsubscribed run at once, without a "was still running" warning', async () => {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), shutdownTimeout: 3_000 })],
      providers: [Export],
    })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    const result = moduleRef.get(Export).run();
    await running;
    for (let i = 0; i < 200 && (await redis.exists('lock:{export-run}')) === 0; i++) await sleep(25);
    expect(await redis.exists('lock:{export-run}')).toBe(1);

    await moduleRef.close();
    await result;
    expect(await redis.exists('lock:{export-run}')).toBe(0);
    const warnings = logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings.filter((message) => message.includes('was still running'))).toEqual([]);
  });
});
