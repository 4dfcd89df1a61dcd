/**
 * Found by review (thirty-fifth session). At a step-down (onLeadershipAcquired threw) the runner
 * waits for the term's runAsLeader() work, then calls onLeadershipLost, then gives the lease back
 * (docs/jobs-and-leaders.md); the wait for the work is bounded by a ttl, so that a work that
 * ignores its signal cannot keep the lease, and onLeadershipLost stays chained after the work
 * (the explorer's step-down invariant: never while the work runs). But the instance then tried
 * for the leadership again at once: it led again without the class having heard of the first
 * term's end, and when the work did end, onLeadershipLost of the old term ran in the middle of
 * the new one (the docs' `onLeadershipLost() { this.socket?.close(); }` closes the new term's
 * socket). Now the instance tries again only once the class has heard of the step-down, and
 * says so in a warning while the work runs on.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

describe('a step-down whose runAsLeader() work ignores its signal', () => {
  const redis = useRedis();

  it('tries for the leadership again only once onLeadershipLost of the term has run, never telling it in a later term', async () => {
    let throwNow!: () => void;
    const throwing = new Promise<void>((resolve) => (throwNow = resolve));
    const acquired: number[] = [];
    const lost: { term: number; laterTermStarted: boolean }[] = [];
    @Injectable()
    @LeaderElection('step-down-hung-work', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        acquired.push(lock.fencingToken);
        // The first term steps down; the later ones lead quietly.
        if (acquired.length === 1) {
          await throwing;
          throw new Error('feed down');
        }
      }
      onLeadershipLost(lock: Lock): void {
        lost.push({ term: lock.fencingToken, laterTermStarted: acquired.some((term) => term > lock.fencingToken) });
      }
    }
    const app = await startJobApp([Leader]);
    try {
      const leadership = app.get(LeadershipService);
      await expect.poll(() => leadership.isLeader('step-down-hung-work'), { timeout: 5_000 }).toBe(true);
      let endWork!: () => void;
      // A work that ignores the term's signal.
      const work = leadership.runAsLeader('step-down-hung-work', () => new Promise<void>((resolve) => (endWork = resolve)));
      throwNow();
      // The step-down gives the lease back a bound later (2 ttls at most) while the work runs on.
      const warned = (): boolean => app.logs.has('warn', 'runAsLeader() work of Leader was still running when it gave the lease');
      await expect.poll(() => acquired.length > 1 || warned(), { timeout: 10_000 }).toBe(true);
      // Failed: this instance (the only one) led again at its next try, the first term's
      // onLeadershipLost not run.
      expect({ acquired: acquired.length, lost }).toEqual({ acquired: 1, lost: [] });
      expect(await redis.exists('lock:{step-down-hung-work}')).toBe(0);
      // Several retry intervals (ttl / 3) later it still waits for the work.
      await sleep(1_000);
      expect({ acquired: acquired.length, lost }).toEqual({ acquired: 1, lost: [] });

      // The work ends at last: the class hears of the first term's end, then this instance leads again.
      endWork();
      await work;
      await expect.poll(() => acquired.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      // Failed: the first term's onLeadershipLost ran in the second term.
      expect(lost).toEqual([{ term: acquired[0], laterTermStarted: false }]);
      expect(leadership.isLeader('step-down-hung-work')).toBe(true);
    } finally {
      await closeNow(app);
    }
  }, 30_000);
});
