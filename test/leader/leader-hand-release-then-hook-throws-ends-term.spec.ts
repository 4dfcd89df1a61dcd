import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LockLostError, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useOwnRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

// Found by review while looking into why seeded bug 41 (hand-release-as-close-begins) was no
// longer found.
//
// A term released by hand ends when the release comes back (LeaderElectionRunner.take():
// `whenReleased(() => (this.lock === leader || this.stopped) && leader.endTerm())`). When the
// term's onLeadershipAcquired releases its own lock and then throws, before that release is back,
// stepDown() takes the term first (`this.lock = undefined`) and calls `interrupt('stepped-down')`,
// which leaves a lock being released alone (HeldLock.interrupt: `this.releasing !== undefined`),
// then runs onLeadershipLost. When the release comes back the term is taken and the election has
// not stopped, so endTerm() is not called either: the term's signal never aborts. It is the shape
// of hand-release-as-close-begins with a step-down in place of the close (d625910 closed it for
// stop() only; stepDown() now does the same). docs/jobs-and-leaders.md: a step-down and a release by hand both abort the term's
// signal (`stepped-down`), "as at every other end of a term", then onLeadershipLost runs.
describe('a leader whose onLeadershipAcquired releases its lock by hand and then throws', () => {
  const { url } = useOwnRedis();

  it("aborts the term's signal (stepped-down) before onLeadershipLost runs, and it stays aborted once the release is back", async () => {
    const seen = { first: undefined as Lock | undefined, abortedWhenToldLost: undefined as boolean | undefined, released: undefined as Promise<void> | undefined };
    @Injectable()
    @LeaderElection('review-release-then-throw', { ttl: 2_000 })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(lock: Lock): void {
        if (seen.first !== undefined) return;
        seen.first = lock;
        // Not awaited: the hook gives its term up, then fails before Redis answers.
        seen.released = lock.release();
        throw new Error('giving up the leadership');
      }
      onLeadershipLost(lock: Lock): void {
        if (lock === seen.first) seen.abortedWhenToldLost ??= lock.signal.aborted;
      }
    }
    await startJobApp([Leader], { redis: url(), shutdownTimeout: 1_000 });
    await expect.poll(() => seen.abortedWhenToldLost, { timeout: 5_000 }).toBeDefined();
    // The release's own promise settles once Redis answered: by then every end of the term ran.
    await seen.released!.catch(() => undefined);
    const reason = seen.first!.signal.reason as LockLostError | undefined;
    // Before the fix: { abortedWhenToldLost: false, aborted: false, reason: undefined }.
    expect({
      abortedWhenToldLost: seen.abortedWhenToldLost,
      aborted: seen.first!.signal.aborted,
      reason: reason instanceof LockLostError ? reason.reason : reason,
    }).toEqual({ abortedWhenToldLost: true, aborted: true, reason: 'stepped-down' });
  });
});
