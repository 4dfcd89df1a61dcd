/**
 * Review of 55ff00a ("a release in flight is one object"). A @Locked call's lock is given back
 * when the call ends; what the call returned is its caller's, and is garbage once the caller
 * drops it. The lock handle itself may outlive the call: `LockService.current()` hands it to the
 * call's code, and the call chain (an AsyncLocalStorage store holding the lock) travels into
 * every timer, socket or promise the call started (here: a cache entry's eviction timer). Before
 * 55ff00a the finished release left `HeldLock.releasing` a settled Promise<void>, which holds
 * nothing of the call.
 *
 * What happens instead: `HeldLock.releasing` now keeps the `ReleaseInFlight` after the release,
 * whose readonly `onReleased` / `onFailed` are the callbacks of locked-call.ts' `releaseThen`,
 * closures over the call's `settle` and its `outcome`: the method's return value (or thrown
 * error). So every lock handle still reachable pins the whole result of its call (a report, a
 * page of rows, a buffer) for as long as the handle lives: here, the 10-minute timer. (Even
 * without the timer the result stays pinned for a while: a heap snapshot shows the deadline
 * sweeper's armed timer closure keeping `first`, the acquire's ReplyWait, whose resolve holds
 * the promise resolved with the HeldLock, until that timer fires; on 55ff00a~1 that path holds
 * only the lock, not the result.)
 *
 * Fails since 55ff00a; passes on 55ff00a~1.
 */
import 'reflect-metadata';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const timers: NodeJS.Timeout[] = [];

@Injectable()
class Reports {
  @Locked('rb:report')
  async build(): Promise<{ rows: number[] }> {
    // Work of the call that outlives it: a cache entry evicted in 10 minutes (unref'd).
    timers.push(setTimeout(() => undefined, 600_000).unref());
    return { rows: new Array<number>(1_000_000).fill(7) };
  }
}

describe('a @Locked call whose lock handle outlives it', () => {
  useRedis();
  afterEach(() => timers.splice(0).forEach(clearTimeout));

  it('does not keep what the call returned once its caller dropped it', { timeout: 20_000 }, async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl() })],
      providers: [Reports],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      const reports = moduleRef.get(Reports);
      let result: { rows: number[] } | undefined = await reports.build();
      const collected = new WeakRef(result);
      expect(result.rows.length).toBe(1_000_000);
      result = undefined;
      for (let i = 0; i < 5 && collected.deref() !== undefined; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      expect(collected.deref() === undefined ? 'collected' : 'still retained').toBe('collected');
      // Sanity: the lock was given back.
      expect(await moduleRef.get(LockService).isLocked('rb:report')).toBe(false);
    } finally {
      await moduleRef.close();
    }
  });
});
