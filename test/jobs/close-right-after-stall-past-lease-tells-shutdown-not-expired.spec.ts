/**
 * Found by review (forty-seventh session). docs/jobs-and-leaders.md, "Paused instances": after the
 * event loop was blocked past a lease, "the lock is reported lost (`expired`) at that moment"; and
 * "Shutdown": running jobs and leaders are told with a `shutdown` LockLostError "while the locks
 * stay held and renewed" (a leader's lease "stays held: no other instance leads before this one
 * has stopped"). An app.close() that begins as the event loop comes back from such a stall (a
 * SIGTERM handled first, a close called by the very code that blocked), before the deadline
 * sweeper's timer had its turn, told the running job and the leader `shutdown`: its stop
 * (JobLockOrchestrator.stop, LeaderElectionRunner.stop) interrupted the locks without asking
 * whether their leases were still live, so code that finishes its last step under a lock it was
 * told it still holds did so on a lease another instance may hold by now, and the leader's
 * onLeadershipLost heard `shutdown`, its lease then given back as if it were still its own.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LockLostError, LockService, OnOneInstance, WithoutOverlapping, type Lock } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('app.close() begun as the event loop comes back from a stall past the leases', () => {
  useRedis();

  it('tells the running job and the leader that their leases expired, not that the application shuts down', async () => {
    const lostReasons: unknown[] = [];
    let acquired = false;
    @LeaderElection('stalled-feed', { ttl: '1s' })
    @Injectable()
    class Feed {
      onLeadershipAcquired(): void {
        acquired = true;
      }
      onLeadershipLost(lock: Lock): void {
        lostReasons.push((lock.signal.reason as LockLostError).reason);
      }
    }
    let jobSignal: AbortSignal | undefined;
    @Injectable()
    class Export {
      constructor(readonly locks: LockService) {}
      @OnOneInstance({ ttl: '1s' })
      @WithoutOverlapping()
      async run(): Promise<void> {
        const { signal } = this.locks.current()!;
        jobSignal = signal;
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      }
    }
    const app = await startJobApp([Feed, Export]);
    await expect.poll(() => acquired).toBe(true);
    // A first claim that came back late skips its call (owner-uncertain): called until it runs.
    await expect
      .poll(() => {
        if (jobSignal === undefined) void app.get(Export).run();
        return jobSignal;
      })
      .toBeDefined();

    // Blocked for well over the leases' ttl, then closed in the same turn of the event loop.
    const until = performance.now() + 2_500;
    while (performance.now() < until) {
      // blocked: no timer, no renewal, no reply is handled
    }
    await app.close();

    // Was: 'shutdown' for both.
    expect((jobSignal!.reason as LockLostError).reason).toBe('expired');
    expect(lostReasons).toEqual(['expired']);
  });
});
