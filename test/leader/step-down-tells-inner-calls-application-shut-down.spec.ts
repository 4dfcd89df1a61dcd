/**
 * Found by review (thirty-fifth session). At a step-down (onLeadershipAcquired threw) the
 * `using()` and `@Locked` calls running inside the term's hooks and runAsLeader() work are told to
 * stop (see run-as-leader-step-down-inner-calls-not-told.spec.ts), but with the reason of
 * app.close(): their signal aborted with a `LockLostError` whose `reason` is `shutdown` and whose
 * message says "the application shut down while the lock was held", while the application runs
 * on. Code that tells a shutdown apart (no retry, no alert: the process is going away) then
 * gave up work for a step-down that the next term would want done.
 */
import { describe, expect, it } from 'vitest';
import { LeadershipService, LockLostError, LockService } from '../../lib/index.js';
import { leaderThatStepsDown } from './step-down-leader.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

describe('the calls inside a term at a step-down', () => {
  useRedis();

  it('are told the leader stepped down, not that the application shut down', async () => {
    const { Leader, fail } = leaderThatStepsDown('inner-reason-step-down');
    const app = await startJobApp([Leader]);
    try {
      const leadership = app.get(LeadershipService);
      const locks = app.get(LockService);
      await expect.poll(() => leadership.isLeader('inner-reason-step-down'), { timeout: 5_000 }).toBe(true);
      let inner: AbortSignal | undefined;
      const work = leadership.runAsLeader('inner-reason-step-down', () =>
        locks.using('inner-reason-batch', (lock) => {
          inner = lock.signal;
          return new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
        }),
      );
      await expect.poll(() => inner !== undefined, { timeout: 5_000 }).toBe(true);
      fail();
      await expect.poll(() => inner?.aborted, { timeout: 5_000 }).toBe(true);
      await work;
      const reason = inner!.reason as LockLostError;
      expect(reason).toBeInstanceOf(LockLostError);
      expect(reason.key).toBe('inner-reason-batch');
      // Failed: 'shutdown', "the application shut down while the lock was held".
      expect(reason.reason).toBe('stepped-down');
      expect(reason.message).not.toContain('shut down');
    } finally {
      await closeNow(app);
    }
  }, 30_000);
});
