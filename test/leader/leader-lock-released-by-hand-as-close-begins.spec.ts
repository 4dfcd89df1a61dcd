import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockLostError, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { blockRedis } from '../support/block-redis.js';
import { useOwnRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

/**
 * A leader whose `onLeadershipAcquired` works until its term's signal aborts (the documented
 * pattern), with what it saw: the term's lock, how many hooks run, whether the signal had
 * aborted when `onLeadershipLost` came.
 */
function workingLeader(key: string, ttl: number) {
  const seen = { first: undefined as Lock | undefined, running: 0, done: false, abortedWhenToldLost: undefined as boolean | undefined };
  @Injectable()
  @LeaderElection(key, { ttl })
  class Leader implements OnLeadershipAcquired, OnLeadershipLost {
    async onLeadershipAcquired(lock: Lock): Promise<void> {
      seen.first ??= lock;
      seen.running++;
      try {
        while (!lock.signal.aborted && !seen.done) await new Promise((resolve) => setTimeout(resolve, 20));
      } finally {
        seen.running--;
      }
    }
    onLeadershipLost(lock: Lock): void {
      seen.abortedWhenToldLost ??= lock.signal.aborted;
    }
  }
  return { Leader, seen };
}

// docs/jobs-and-leaders.md: a term released by hand ends "as at every other end of a term" (its
// signal aborts, stepped-down, then onLeadershipLost runs); "Shutdown": leaders are told first.
describe('a leadership lock released by hand just as app.close() begins (the release still on its way)', () => {
  const { url } = useOwnRedis();

  // Found by the explorer's leader probe (explore/sim/world.ts, `leaderProbe`: a hand release,
  // then the releasing instance closes 0 ms later). A term released by hand ends when the release
  // comes back (HeldLock.whenReleased -> `this.lock === leader && leader.endTerm()`). When
  // app.close() began while that release was on its way, LeaderElectionRunner.stop() took the
  // term first (`this.lock = undefined`) and interrupted it, but `interrupt()` does nothing to a
  // lock being released; when the release came back, `this.lock !== leader`, so endTerm() was not
  // called either. The term's signal never aborted: the hook kept the close waiting its whole
  // shutdownTimeout ("were still running"), and ran on after app.close() for good.
  it("still aborts the term's signal: the leader's work stops, and the close does not wait for it", async () => {
    const { Leader, seen } = workingLeader('released-as-close-begins', 2_000);
    const app = await startJobApp([Leader], { redis: url(), shutdownTimeout: 1_000 });
    await expect.poll(() => seen.running, { timeout: 5_000 }).toBe(1);
    expect(app.get(LeadershipService).leaderLock('released-as-close-begins')).toBe(seen.first);
    try {
      // Not awaited: its reply from Redis comes after the close has begun.
      const releasing = seen.first!.release();
      await closeNow(app);
      await releasing;
      const reason = seen.first!.signal.reason as LockLostError | undefined;
      expect({
        aborted: seen.first!.signal.aborted,
        reason: reason instanceof LockLostError ? reason.reason : reason,
        running: seen.running,
        warned: app.logs.has('warn', 'were still running'),
      }).toEqual({ aborted: true, reason: expect.stringMatching(/^(stepped-down|shutdown)$/), running: 0, warned: false });
    } finally {
      seen.done = true;
    }
  }, 30_000);

  // 985fc2d (above) ends the term when the release comes back during the close. When Redis is
  // slow to answer that release (blocked, cut off, a failover: the very moment a hand release and
  // a shutdown meet in a deploy), nothing told the leader for as long as the reply took: its hook
  // ran the whole shutdownTimeout, and onLeadershipLost was called with the signal not aborted.
  it("aborts the term's signal at stop() when Redis has not answered the release: the hook ends, onLeadershipLost sees it aborted", async () => {
    const { Leader, seen } = workingLeader('s15g-released-unanswered', 6_000);
    const app = await startJobApp([Leader], { redis: url(), ttl: 6_000, shutdownTimeout: 1_000 });
    await expect.poll(() => seen.running, { timeout: 10_000 }).toBe(1);
    expect(app.get(LeadershipService).leaderLock('s15g-released-unanswered')).toBe(seen.first);
    try {
      // Redis answers nothing for 4 s: the hand release is on its way through the whole close.
      const { ended } = await blockRedis(url(), 4_000);
      const releasing = seen.first!.release().catch(() => undefined);
      await closeNow(app);
      const atClose = { aborted: seen.first!.signal.aborted, running: seen.running, abortedWhenToldLost: seen.abortedWhenToldLost, warned: app.logs.has('warn', 'were still running') };
      await ended;
      await releasing;
      expect(atClose).toEqual({ aborted: true, running: 0, abortedWhenToldLost: true, warned: false });
    } finally {
      seen.done = true;
    }
  }, 30_000);
});
