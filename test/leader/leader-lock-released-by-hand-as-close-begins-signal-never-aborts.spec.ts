import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockLostError, type Lock, type OnLeadershipAcquired } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// Found by the explorer's leader probe (explore/sim/world.ts, `leaderProbe`: a hand release, then
// the releasing instance closes 0 ms later). A term released by hand ends when the release comes
// back (HeldLock.whenReleased -> `this.lock === leader && leader.endTerm()`). When app.close()
// begins while that release is on its way, LeaderElectionRunner.stop() takes the term first
// (`this.lock = undefined`) and interrupts it, but `interrupt()` does nothing to a lock that is
// being released; when the release then comes back, `this.lock !== leader`, so endTerm() is not
// called either. The term's signal never aborts: a hook that works until it aborts (the documented
// pattern) keeps the close waiting its whole shutdownTimeout ("were still running"), and runs on
// after app.close() for good. docs/jobs-and-leaders.md: released by hand, "the term's signal
// aborts, stepped-down, as at every other end of a term"; "Shutdown": leaders are told first.
describe('a leadership lock released by hand just as app.close() begins (the release still on its way)', () => {
  useRedis();

  it("still aborts the term's signal: the leader's work stops, and the close does not wait for it", async () => {
    let running = 0;
    let first: Lock | undefined;
    let done = false;
    @Injectable()
    @LeaderElection('released-as-close-begins', { ttl: '2s' })
    class Leader implements OnLeadershipAcquired {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        first ??= lock;
        running++;
        try {
          while (!lock.signal.aborted && !done) await new Promise((resolve) => setTimeout(resolve, 20));
        } finally {
          running--;
        }
      }
    }
    const app = await startJobApp([Leader], { shutdownTimeout: 1_000 });
    await expect.poll(() => running, { timeout: 5_000 }).toBe(1);
    expect(app.get(LeadershipService).leaderLock('released-as-close-begins')).toBe(first);
    try {
      // Not awaited: its reply from Redis comes after the close has begun.
      const releasing = first!.release();
      const started = performance.now();
      await closeNow(app);
      const closeMs = performance.now() - started;
      await releasing;
      const reason = first!.signal.reason as LockLostError | undefined;
      // Fails: { aborted: false, reason: undefined, running: 1, closeUnderShutdownTimeout: false, warned: true }.
      expect({
        aborted: first!.signal.aborted,
        reason: reason instanceof LockLostError ? reason.reason : reason,
        running,
        closeUnderShutdownTimeout: closeMs < 900,
        warned: app.logs.has('warn', 'were still running'),
      }).toEqual({ aborted: true, reason: expect.stringMatching(/^(stepped-down|shutdown)$/), running: 0, closeUnderShutdownTimeout: true, warned: false });
    } finally {
      done = true;
    }
  }, 30_000);
});
