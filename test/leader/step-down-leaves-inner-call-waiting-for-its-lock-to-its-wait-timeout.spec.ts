/**
 * Left from the thirty-ninth session: at a step-down (onLeadershipAcquired threw) the `using()`
 * and `@Locked` calls running inside the term are told to stop, but one still WAITING for its lock
 * (another holder has it) was left to its waitTimeout: it went on waiting after the term ended, the
 * step-down gave the lease back without it ("runAsLeader() work ... was still running"), and once
 * the other holder let go, it took the lock and ran its work as a leader that no longer led.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, Locked, LockLostError, LockNotAcquiredError, LockService, type OnLeadershipAcquired } from '../../lib/index.js';
import { leaderThatStepsDown } from './step-down-leader.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

describe('a call inside a term still waiting for its lock at a step-down', () => {
  useRedis();

  it('ends at once with LockNotAcquiredError whose cause says the leader stepped down', async () => {
    const { Leader, fail } = leaderThatStepsDown('inner-wait-step-down');
    const app = await startJobApp([Leader]);
    try {
      const leadership = app.get(LeadershipService);
      const locks = app.get(LockService);
      let waiting = false;
      locks.events$.subscribe((event) => event.type === 'waiting' && event.key === 'inner-wait-batch' && (waiting = true));
      await expect.poll(() => leadership.isLeader('inner-wait-step-down'), { timeout: 5_000 }).toBe(true);
      // Held outside the term, for longer than this test lasts.
      const other = await locks.acquire('inner-wait-batch', { ttl: '60s' });
      let ran = false;
      let ended: unknown;
      void leadership
        .runAsLeader('inner-wait-step-down', () => locks.using('inner-wait-batch', () => (ran = true), { waitTimeout: '60s' }))
        .catch((error: unknown) => (ended = error));
      await expect.poll(() => waiting, { timeout: 5_000 }).toBe(true);
      fail();
      // Failed: still undefined (the call waits for its 60 s waitTimeout).
      await expect.poll(() => ended, { timeout: 5_000 }).toBeInstanceOf(LockNotAcquiredError);
      const error = ended as LockNotAcquiredError;
      expect(error.message).toContain('the leader stepped down');
      expect(error.cause).toBeInstanceOf(LockLostError);
      expect((error.cause as LockLostError).reason).toBe('stepped-down');
      expect((error.cause as LockLostError).key).toBe('inner-wait-step-down');
      // Its work never runs, even once the key is free.
      await other.release();
      expect(await locks.isLocked('inner-wait-batch')).toBe(false);
      expect(ran).toBe(false);
      expect(app.logs.lines.filter((line) => line.message.includes('still running'))).toEqual([]);
    } finally {
      await closeNow(app);
    }
  }, 30_000);

  it('ends a @Locked call the throwing hook itself left waiting, as one of runAsLeader() work', async () => {
    const seen = { ran: false, ended: undefined as unknown };
    let waiting!: () => void;
    const waitingSeen = new Promise<void>((resolve) => (waiting = resolve));
    @Injectable()
    class Batch {
      @Locked('inner-wait-hook-batch', { waitTimeout: '60s' })
      async run(): Promise<void> {
        seen.ran = true;
      }
    }
    @Injectable()
    @LeaderElection('inner-wait-hook-step-down', { ttl: '4s' })
    class Feed implements OnLeadershipAcquired {
      constructor(private readonly batch: Batch) {}
      async onLeadershipAcquired(): Promise<void> {
        const batch = this.batch.run().catch((error: unknown) => (seen.ended = error));
        // Two branches of one hook: the other fails while the batch still waits for its lock.
        await Promise.all([batch, waitingSeen.then(() => Promise.reject(new Error('feed down')))]);
      }
    }
    const app = await startJobApp([Batch, Feed]);
    const locks = app.get(LockService);
    locks.events$.subscribe((event) => event.type === 'waiting' && event.key === 'inner-wait-hook-batch' && waiting());
    // Held before the election's first try can lead: the hook's call finds the key held.
    const other = await locks.acquire('inner-wait-hook-batch', { ttl: '60s' });
    try {
      // Failed: still undefined (the call waits for its 60 s waitTimeout).
      await expect.poll(() => seen.ended, { timeout: 10_000 }).toBeInstanceOf(LockNotAcquiredError);
      expect(((seen.ended as LockNotAcquiredError).cause as LockLostError).reason).toBe('stepped-down');
      await other.release();
      expect(await locks.isLocked('inner-wait-hook-batch')).toBe(false);
      expect(seen.ran).toBe(false);
    } finally {
      await closeNow(app);
    }
  }, 30_000);
});
