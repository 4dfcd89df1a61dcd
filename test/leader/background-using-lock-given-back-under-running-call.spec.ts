/**
 * Found by review of the day's fixes (twenty-ninth session): 177e04e makes the job/leader phase of app.close() interrupt every
 * using()/@Locked call whose chain runs within a job run's or a leader's locks. LockService's own
 * phase (LockManager.giveBackAll) then drops from the calls it waits for every lock whose signal
 * is already aborted ("a lock told to stop before had its shutdownTimeout there already"). That
 * premise holds for the job's own locks, not for these inner calls: the job/leader phase waits for
 * the run or the hooks, never for a call they started and did not await (a leader's background
 * loop started from onLeadershipAcquired, a job's fire-and-forget call). Such a call's lock is now
 * given back at once under the running call, which still works on the key; before 177e04e
 * LockService's phase waited for it (up to two thirds of shutdownTimeout) as for any other call.
 */
import { Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LockService, type OnLeadershipAcquired } from '../../lib/index.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { sleep } from '../support/lock-app.js';
import { startJobApp } from '../jobs/support.js';

describe("app.close() with a using() call a leader's hook started and did not await", () => {
  useRedis();

  it('keeps the call its lock until it ends, as for any other running call', { timeout: 30_000 }, async () => {
    const raw = new Redis(redisUrl());
    let started = false;
    let heldWhileWorking: number | undefined;
    let ended = false;
    @Injectable()
    @LeaderElection('background-leader', { ttl: '10s' })
    class Feed implements OnLeadershipAcquired {
      constructor(readonly locks: LockService) {}
      onLeadershipAcquired(): void {
        // A background loop: the hook returns at once, the call runs in its async context.
        void this.locks.using('feed-write', async (lock) => {
          started = true;
          await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
          // Finishing the write in hand after the signal, as a call may (well within shutdownTimeout).
          await sleep(300);
          heldWhileWorking = await raw.exists('lock:{feed-write}');
          ended = true;
        });
      }
    }
    const app = await startJobApp([Feed], { shutdownTimeout: 3_000 });
    try {
      await expect.poll(() => started).toBe(true);
      await app.close();
      await expect.poll(() => ended).toBe(true);
      // Fails: 0, the lock was given back while the call still ran (before 177e04e: 1).
      expect(heldWhileWorking).toBe(1);
    } finally {
      raw.disconnect();
    }
  });
});
