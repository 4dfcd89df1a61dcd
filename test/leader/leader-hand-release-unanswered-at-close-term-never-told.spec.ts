import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { blockRedis } from '../support/block-redis.js';
import { useOwnRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// 985fc2d fixed a term released by hand just as app.close() begins when the release's reply comes
// back during the close: LeaderElectionRunner.stop() takes the term, `interrupt()` leaves a lock
// being released alone (lib/core/engine/held-lock.ts:235), and the term now ends (endTerm) only
// when that release comes back (lib/scheduling/leader-election.runner.ts:154). When Redis is slow
// to answer that release (blocked, cut off, a failover: the very moment a hand release and a
// shutdown meet in a deploy), nothing tells the leader for as long as the reply takes: its hook,
// working until the signal aborts (the documented pattern), runs the whole shutdownTimeout
// ("were still running"), and onLeadershipLost is called while the term's signal is still not
// aborted. docs/jobs-and-leaders.md: a term released by hand ends as "at every other end of a
// term" (its signal aborts, then onLeadershipLost runs); "Shutdown": leaders are told first.
describe('a leadership lock released by hand whose release Redis has not answered when app.close() begins', () => {
  const { url } = useOwnRedis();

  it("aborts the term's signal at stop(): the leader is told, its hook ends, onLeadershipLost sees an aborted signal", async () => {
    let running = 0;
    let first: Lock | undefined;
    let done = false;
    let abortedWhenToldLost: boolean | undefined;
    @Injectable()
    @LeaderElection('s15g-released-unanswered', { ttl: '6s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        first ??= lock;
        running++;
        try {
          while (!lock.signal.aborted && !done) await new Promise((resolve) => setTimeout(resolve, 20));
        } finally {
          running--;
        }
      }
      onLeadershipLost(lock: Lock): void {
        abortedWhenToldLost ??= lock.signal.aborted;
      }
    }
    const app = await startJobApp([Leader], { redis: url(), ttl: 6_000, shutdownTimeout: 1_000 });
    await expect.poll(() => running, { timeout: 10_000 }).toBe(1);
    expect(app.get(LeadershipService).leaderLock('s15g-released-unanswered')).toBe(first);
    try {
      // Redis answers nothing for 4 s: the hand release is on its way through the whole close.
      const { ended } = await blockRedis(url(), 4_000);
      const releasing = first!.release().catch(() => undefined);
      await closeNow(app);
      const atClose = { aborted: first!.signal.aborted, running, abortedWhenToldLost, warned: app.logs.has('warn', 'were still running') };
      await ended;
      await releasing;
      // Today: { aborted: false, running: 1, abortedWhenToldLost: false, warned: true }.
      expect(atClose).toEqual({ aborted: true, running: 0, abortedWhenToldLost: true, warned: false });
    } finally {
      done = true;
    }
  }, 30_000);
});
