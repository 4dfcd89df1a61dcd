import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, RedisLockError, type Lock, type OnLeadershipAcquired } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// The explorer reads @LeaderElection with Reflect.getOwnMetadata on the provider's class, so a
// provided subclass of an elected class (an abstract base with the hooks, a concrete class per
// deployment) is no candidate at all: the startup succeeds, no instance ever leads, no hook runs,
// nothing is logged, and LeadershipService says there is no such election. Job methods, by
// contrast, are inherited (a subclass gets its own key). Either run the election for the subclass
// or refuse the startup naming the class.
describe('a provided subclass of a @LeaderElection class', () => {
  const redis = useRedis();

  it('is elected (or the startup is refused), not silently left out', async () => {
    const hooks: string[] = [];
    @LeaderElection('price-feed', { ttl: '10s' })
    abstract class FeedLeader implements OnLeadershipAcquired {
      onLeadershipAcquired(lock: Lock): void {
        hooks.push(lock.held ? 'acquired' : 'acquired, not held');
      }
    }
    @Injectable()
    class EuFeedLeader extends FeedLeader {}

    let startup: unknown;
    const app = await startJobApp([EuFeedLeader]).catch((error: unknown) => {
      startup = error;
      return undefined;
    });
    if (app === undefined) {
      expect(startup).toBeInstanceOf(RedisLockError);
      expect((startup as Error).message).toContain('EuFeedLeader');
      return;
    }
    // The first try is made at bootstrap; give it ample time.
    await expect.poll(() => hooks, { timeout: 3_000 }).toEqual(['acquired']).catch(() => undefined);
    await sleep(0);
    // Fails: no hook ran, nothing in Redis, and isLeader throws "no @LeaderElection() with this key".
    expect({ hooks, lease: await redis.exists('lock:{price-feed}') }).toEqual({ hooks: ['acquired'], lease: 1 });
    expect(app.get<LeadershipService>(LeadershipService).isLeader('price-feed')).toBe(true);
  });
});
