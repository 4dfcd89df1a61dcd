import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { ordinals } from '../support/tokens.js';
import { LeaderElection, LeadershipService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// 48f35c0: "a term lock released by hand (leaderLock(key).release()) ends the term ... as with a
// loss". A loss aborts the term's lock.signal, which is how a leader's work learns to stop. A
// release aborts no signal (HeldLock.whenReleased), so a well-behaved onLeadershipAcquired that
// works until its signal aborts is never told: lost() waits a ttl for it, warns that it "had not
// returned", runs onLeadershipLost while it still works, and the next term's onLeadershipAcquired
// then runs beside it: two leader loops in one instance.
describe('a leadership lock released by hand while the leader works until its signal aborts', () => {
  const redis = useRedis();

  it("aborts the term's signal, so that the work stops before the next term's starts", async () => {
    const terms: number[] = [];
    let running = 0;
    let mostAtOnce = 0;
    let lostWhileRunning = 0;
    @Injectable()
    @LeaderElection('released-while-working', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        terms.push(lock.fencingToken);
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        try {
          while (!lock.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 20));
        } finally {
          running--;
        }
      }
      onLeadershipLost(): void {
        if (running > 0) lostWhileRunning++;
      }
    }
    const app = await startJobApp([Leader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => ordinals(terms), { timeout: 5_000 }).toEqual([1]);
    const first = leadership.leaderLock('released-while-working')!;
    await first.release();
    expect(await redis.exists('lock:{released-while-working}')).toBe(0);

    // The election goes on (48f35c0): a second term.
    await expect.poll(() => ordinals(terms), { timeout: 10_000 }).toEqual([1, 2]);
    // Fails: the first term's signal never aborted; its work ran beside the second term's.
    expect({ firstAborted: first.signal.aborted, mostAtOnce, lostWhileRunning }).toEqual({ firstAborted: true, mostAtOnce: 1, lostWhileRunning: 0 });
    expect(app.logs.has('warn', 'had not returned')).toBe(false);
  }, 30_000);

  it('stops that work by app.close() (its loop would keep the process alive)', async () => {
    let running = 0;
    let first: Lock | undefined;
    @Injectable()
    @LeaderElection('released-then-close', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        first ??= lock;
        running++;
        try {
          while (!lock.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 20));
        } finally {
          running--;
        }
      }
    }
    const app = await startJobApp([Leader]);
    await expect.poll(() => running, { timeout: 5_000 }).toBe(1);
    await first!.release();
    await closeNow(app);
    // Fails: the first term's signal never aborts, so its loop runs on after close (1 or 2 running).
    await expect.poll(() => ({ running, aborted: first!.signal.aborted }), { timeout: 5_000 }).toEqual({ running: 0, aborted: true });
  }, 30_000);
});
