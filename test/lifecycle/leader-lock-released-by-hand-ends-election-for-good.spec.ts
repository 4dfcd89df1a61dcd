import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { ordinals } from '../support/tokens.js';
import { LeaderElection, LeadershipService, LockService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

// LeadershipService.leaderLock(key) (and the lock handed to onLeadershipAcquired) is a plain Lock
// whose release() is public. A leader that steps down by releasing it (the obvious way to give up
// a lock) leaves the election runner holding a released lock: `this.lock` is still set, so
// retryLater() never schedules another try (it returns while `this.lock !== undefined`), the
// signal never aborts, so onLeadershipLost never runs. This instance never leads again, and with
// one instance nobody ever leads; isLeader() says false for ever.
describe('a leadership lock released by hand', () => {
  const redis = useRedis();

  it('ends the term (onLeadershipLost) and the instance goes on trying for the leadership', async () => {
    const terms: number[] = [];
    let lost = 0;
    @Injectable()
    @LeaderElection('handed-back', { ttl: '1s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(lock: Lock): void {
        terms.push(lock.fencingToken);
      }
      onLeadershipLost(): void {
        lost++;
      }
    }
    const app = await startJobApp([Leader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader('handed-back'), { timeout: 5_000 }).toBe(true);
    await leadership.leaderLock('handed-back')!.release();
    expect(await redis.exists('lock:{handed-back}')).toBe(0);
    expect(leadership.isLeader('handed-back')).toBe(false);

    // Nobody else runs: the election retries every ttl / 3 while it does not lead.
    // Fails: the key stays free and terms stays [1].
    await expect.poll(() => redis.exists('lock:{handed-back}'), { timeout: 8_000 }).toBe(1);
    await expect.poll(() => ordinals(terms), { timeout: 5_000 }).toEqual([1, 2]);
    expect(lost).toBe(1);
    expect((await app.get(LockService).inspect('handed-back')).holder?.label).toBe('Leader (@LeaderElection)');
  }, 30_000);
});
