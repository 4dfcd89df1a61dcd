/**
 * Found by review (forty-seventh session), beside
 * test/jobs/close-right-after-stall-past-lease-tells-shutdown-not-expired.spec.ts: an
 * onLeadershipAcquired that blocked the event loop past its lease (a CPU-bound start-up, a long GC
 * pause) and then threw, in the same turn, was taken for a step-down: LeaderElectionRunner.acquired
 * (lib/scheduling/leader-election.runner.ts) stepped down without asking whether the lease was
 * still live, so the term's signal aborted `stepped-down` and onLeadershipLost heard it, while the
 * lease had run out and another instance may lead by now (docs/jobs-and-leaders.md, "Paused
 * instances": after such a stall "the lock is reported lost (`expired`) at that moment"); had the
 * deadline sweeper's timer come first, the same term was a loss.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, type LockLostError, type Lock } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

describe('onLeadershipAcquired that throws after blocking the event loop past its lease', () => {
  useRedis();

  it('tells the class that the lease expired, not that it stepped down', async () => {
    const lostReasons: unknown[] = [];
    @LeaderElection('stalled-start', { ttl: '1s' })
    @Injectable()
    class Feed {
      async onLeadershipAcquired(): Promise<void> {
        // Only the first term blocks: a later one leads on.
        if (lostReasons.length > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
        const until = performance.now() + 2_500;
        while (performance.now() < until) {
          // blocked: no timer, no renewal, no reply is handled
        }
        throw new Error('feed down');
      }
      onLeadershipLost(lock: Lock): void {
        lostReasons.push((lock.signal.reason as LockLostError).reason);
      }
    }
    await startJobApp([Feed]);
    await expect.poll(() => lostReasons.length).toBeGreaterThan(0);
    // Was: ['stepped-down'].
    expect(lostReasons[0]).toBe('expired');
  });
});
