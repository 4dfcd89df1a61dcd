import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { ordinals } from '../support/tokens.js';
import { LeaderElection, LeadershipService, LockService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useOwnRedis, useRedis } from '../support/redis.js';
import { blockRedis } from '../support/block-redis.js';
import { startJobApp } from '../jobs/support.js';

// The election's lost() runs in the async context of whoever aborted the term's signal. When the
// leader itself learns of the loss inside onLeadershipAcquired (an extend() refused, or `lock.held`
// read after a stall), that context is the hook's call chain, which holds the lost term lock. The
// retry timer set from there carries that chain: every later tryAcquire(key) re-enters the lost
// outer lock and throws its LockLostError, and the instance never leads again.
describe('a leader that learns of its loss inside its own onLeadershipAcquired', () => {
  const redis = useRedis();

  it('(extend refused) tries for the leadership again and wins a second term', async () => {
    const terms: number[] = [];
    let lost = 0;
    let stolen!: () => void;
    const keyGone = new Promise<void>((resolve) => (stolen = resolve));
    const extendErrors: string[] = [];
    @Injectable()
    @LeaderElection('seen-in-hook', { ttl: '2s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        terms.push(lock.fencingToken);
        if (terms.length > 1) return;
        await keyGone;
        // The leader asks for more time: Redis refuses (the key is gone), the term is lost.
        await lock.extend().catch((error: Error) => extendErrors.push(error.constructor.name));
      }
      onLeadershipLost(): void {
        lost++;
      }
    }
    const app = await startJobApp([Leader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => ordinals(terms), { timeout: 5_000 }).toEqual([1]);
    await redis.del('lock:{seen-in-hook}');
    stolen();
    await expect.poll(() => extendErrors.length, { timeout: 5_000 }).toBe(1);
    await expect.poll(() => lost, { timeout: 5_000 }).toBe(1);

    // Nobody else runs: the election retries every ttl / 3 while it does not lead.
    // Fails: every attempt throws the lost term's LockLostError ("could not try for the leadership").
    await expect.poll(() => ordinals(terms), { timeout: 10_000 }).toEqual([1, 2]);
    expect(leadership.isLeader('seen-in-hook')).toBe(true);
    expect((await app.get(LockService).inspect('seen-in-hook')).holder?.label).toBe('Leader (@LeaderElection)');
    expect(app.logs.lines.filter((line) => line.message.includes('could not try for the leadership')).map((line) => line.message).slice(0, 1)).toEqual([]);
  }, 30_000);

  it('(lock.held read after a stall longer than the ttl) tries for the leadership again', async () => {
    const terms: number[] = [];
    let lost = 0;
    const heldAfterStall: boolean[] = [];
    @Injectable()
    @LeaderElection('stalled-in-hook', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(lock: Lock): void {
        terms.push(lock.fencingToken);
        if (terms.length > 1) return;
        // CPU-bound work longer than the ttl, then the documented check before acting on.
        const until = Date.now() + 1_500;
        while (Date.now() < until) {
          /* busy */
        }
        heldAfterStall.push(lock.held);
      }
      onLeadershipLost(): void {
        lost++;
      }
    }
    const app = await startJobApp([Leader]);
    await expect.poll(() => heldAfterStall, { timeout: 5_000 }).toEqual([false]);
    await expect.poll(() => lost, { timeout: 5_000 }).toBe(1);
    // Fails: terms stays [1]; the log fills with "could not try for the leadership".
    await expect.poll(() => ordinals(terms), { timeout: 10_000 }).toEqual([1, 2]);
    expect(app.logs.lines.filter((line) => line.message.includes('could not try for the leadership')).map((line) => line.message).slice(0, 1)).toEqual([]);
  }, 30_000);
});

// The same, with no user code noticing anything: the deadline sweeper's one timer is re-armed in
// the async context of whoever tracked the earliest deadline, and re-arms itself from there. A
// leader whose hook took another lock (shorter ttl) leaves the sweeper in the hook's chain; a
// Redis outage longer than the ttl then expires the term from that chain, and once Redis is back
// the instance never leads again. Without the side lock the same outage is survived.
describe('a leader whose hook took another lock, after a Redis outage longer than its ttl', () => {
  const own = useOwnRedis();

  it('tries for the leadership again once Redis is back', async () => {
    const terms: number[] = [];
    let locks!: LockService;
    @Injectable()
    @LeaderElection('side-lock-outage', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        terms.push(lock.fencingToken);
        const side = await locks.acquire('side', { ttl: 200 });
        await side.release();
      }
    }
    const app = await startJobApp([Leader], { redis: own.url() });
    locks = app.get(LockService);
    await expect.poll(() => ordinals(terms), { timeout: 5_000 }).toEqual([1]);
    const first = app.get(LeadershipService).leaderLock('side-lock-outage')!;
    const { ended } = await blockRedis(own.url(), 2_500);
    await ended;
    expect(first.signal.aborted).toBe(true);
    // Fails: terms stays [1]; every try throws the first term's LockLostError.
    await expect.poll(() => terms.length, { timeout: 10_000 }).toBe(2);
  }, 30_000);
});
