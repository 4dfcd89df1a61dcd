import { describe, expect, it } from 'vitest';
import { LeadershipService, type Lock } from '../../lib/index.js';
import { settledTimeouts } from '../support/mechanism.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';
import { leaderThatStepsDown } from './step-down-leader.js';

// Found by review. A step-down (onLeadershipAcquired threw) waits for the term's runAsLeader()
// work, bounded by the term's ttl (`bounded(..., cutAfterStop)`), then `releaseLease()` waits for
// every term's work in a second bound of a ttl that it creates only then. app.close() during the
// first wait cuts it once shutdownTimeout is spent (stop() aborts `cutAfterStop`), which is what
// starts the second wait: created after the cut, nothing ends it. With the work stuck past its
// abort signal, app.close() returned with a ttl-long ref'd timer (the process does not exit on its
// own for up to a ttl); when it fired, the step-down called the lease's release() after
// LockService had shut down (a no-op by then: the shutdown had given the lease back).

describe('a leader stepping down while its runAsLeader() work is stuck past its signal, then app.close()', () => {
  const redis = useRedis();

  it('leaves no timer behind, and no lease in Redis', async () => {
    const key = 'step-down-stuck-work-close';
    const { Leader: FailingLeader, fail } = leaderThatStepsDown(key, undefined, '60s');
    const before = await settledTimeouts();
    const app = await startJobApp([FailingLeader], { shutdownTimeout: 300 });
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader(key), { timeout: 5_000 }).toBe(true);
    let term: Lock | undefined;
    // Stuck: it never ends, told or not (a driver call that hangs, say).
    void leadership.runAsLeader(key, (lock) => {
      term = lock;
      return new Promise<never>(() => undefined);
    });
    fail();
    // The step-down began: the term is told, and waits (up to its 60 s ttl) for the work.
    await expect.poll(() => term?.signal.aborted, { timeout: 5_000 }).toBe(true);
    expect(await redis.exists(`lock:{${key}}`)).toBe(1);
    await closeNow(app);
    const after = await settledTimeouts();
    // Fails before the fix: one Timeout more than before the app started (the 60 s wait of
    // releaseLease(), created after app.close() cut the step-down's first wait).
    expect(after).toBeLessThanOrEqual(before);
    // And the lease was given back by the close, not left to expire (or sent a ttl later).
    expect(await redis.exists(`lock:{${key}}`)).toBe(0);
    expect(app.logs.has('warn', 'shutdownTimeout')).toBe(true);
  }, 60_000);
});
