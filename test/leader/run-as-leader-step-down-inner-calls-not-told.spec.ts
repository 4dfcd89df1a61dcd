import { describe, expect, it } from 'vitest';
import { LeadershipService, LockService } from '../../lib/index.js';
import { leaderThatStepsDown } from './step-down-leader.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

/**
 * Found by review (thirtieth session, fixes). docs/jobs-and-leaders.md says of runAsLeader()'s
 * work: "the term's end aborts its signal (and tells the `using()` and `@Locked` calls inside
 * it), and at `app.close()` or a step-down the lease is given back only after the work has
 * ended". At a step-down (onLeadershipAcquired threw) the term's signal aborts, but a `using()`
 * call inside the work is not told (only stop() calls interruptCallsWithin): a work that waits
 * for it keeps running, and the step-down holds the lease for it up to a ttl, then gives the lease
 * back while the work (and its inner lock) still run.
 */
describe('runAsLeader() work at a step-down', () => {
  useRedis();

  it('tells the using() calls running inside the work, as at app.close()', async () => {
    const { Leader, fail } = leaderThatStepsDown('work-inner-step-down');
    const app = await startJobApp([Leader]);
    try {
      const leadership = app.get(LeadershipService);
      const locks = app.get(LockService);
      await expect.poll(() => leadership.isLeader('work-inner-step-down'), { timeout: 5_000 }).toBe(true);
      let inner: AbortSignal | undefined;
      let term: AbortSignal | undefined;
      const work = leadership.runAsLeader('work-inner-step-down', (t) => {
        term = t.signal;
        // A batch under a lock of its own, which stops on that lock's signal.
        return locks.using('work-inner-batch', (lock) => {
          inner = lock.signal;
          return new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
        });
      });
      await expect.poll(() => inner !== undefined, { timeout: 5_000 }).toBe(true);
      fail();
      await expect.poll(() => term?.aborted, { timeout: 5_000 }).toBe(true);
      // At app.close() the inner call is told at once; at a step-down it should be too.
      await expect.poll(() => inner?.aborted, { timeout: 2_000 }).toBe(true);
      await work;
    } finally {
      await closeNow(app);
    }
  }, 30_000);
});
