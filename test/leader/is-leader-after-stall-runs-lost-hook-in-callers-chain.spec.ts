/**
 * The leader flavour of loss-read-from-another-chain-reenters-its-lock.spec.ts: a route that
 * holds its own lock and asks `LeadershipService.isLeader(key)` right after an event-loop stall
 * past the term's lease (docs/jobs-and-leaders.md: "isLeader-style checks by hand") learns of the
 * loss there (leaseLive -> HeldLock.expire -> lose -> the term's signal aborts), and the
 * election's loss handling, `onLeadershipLost` included, runs inside the route's call chain:
 * `current()` names the route's lock, and the hook taking the route's key re-enters the route's
 * lock instead of finding it busy.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockService, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

describe('isLeader() that finds the term lost after a stall', () => {
  useRedis();

  it("runs onLeadershipLost outside the caller's call chain", async () => {
    const seen: { current?: string; retook?: string }[] = [];
    let locks!: LockService;
    @Injectable()
    @LeaderElection('stall-elected', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(): void {}
      async onLeadershipLost(): Promise<void> {
        const current = locks.current()?.key;
        // Its clean-up works on what the route's lock guards.
        const lock = await locks.tryAcquire('stall-report');
        seen.push({ ...(current === undefined ? {} : { current }), ...(lock === null ? {} : { retook: lock.constructor.name }) });
        await lock?.release();
      }
    }
    const app = await startJobApp([Leader], { ttl: 5_000 });
    locks = app.get(LockService);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader('stall-elected'), { timeout: 10_000 }).toBe(true);
    await locks.using('stall-report', async () => {
      // CPU work past the term's 1 s lease, then the check.
      const until = performance.now() + 1_500;
      while (performance.now() < until);
      expect(leadership.isLeader('stall-elected')).toBe(false);
      await expect.poll(() => seen.length, { timeout: 5_000 }).toBe(1);
    });
    // Before: [{ current: 'stall-report', retook: 'ReentrantLock' }]
    expect(seen).toEqual([{}]);
  }, 30_000);
});
