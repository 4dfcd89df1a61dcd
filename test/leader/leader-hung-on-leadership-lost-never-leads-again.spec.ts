import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { ordinals } from '../support/tokens.js';
import { LeaderElection, LeadershipService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

// 48f35c0 keeps a hung onLeadershipAcquired from keeping the instance out of the election for
// good (it gets a ttl after a loss). The other hook is not bounded: lost() schedules the next try
// only after `await this.callLost(lock)`, so an onLeadershipLost that never returns (a flush to
// a store that hangs) stops the election on this instance for good, silently: nobody leads
// although the documented election "tries to take the lease every retryMs while it does not lead".
describe('a leader whose onLeadershipLost never returns', () => {
  const redis = useRedis();

  it('still tries for the leadership again after a loss', async () => {
    const terms: number[] = [];
    let lostCalls = 0;
    @Injectable()
    @LeaderElection('hung-lost-hook', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(lock: Lock): void {
        terms.push(lock.fencingToken);
      }
      onLeadershipLost(): Promise<void> {
        lostCalls++;
        return new Promise<void>(() => undefined); // never settles
      }
    }
    const app = await startJobApp([Leader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => ordinals(terms), { timeout: 5_000 }).toEqual([1]);
    const first = leadership.leaderLock('hung-lost-hook')!;
    await redis.del('lock:{hung-lost-hook}');
    await expect.poll(() => first.signal.aborted, { timeout: 5_000 }).toBe(true);
    await expect.poll(() => lostCalls, { timeout: 5_000 }).toBe(1);

    // Fails: the key stays free for good and terms stays [1].
    await expect.poll(() => redis.exists('lock:{hung-lost-hook}'), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => leadership.isLeader('hung-lost-hook'), { timeout: 10_000 }).toBe(true);
  }, 40_000);
});
