import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockModule } from '../../lib/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review s31 (fencing): the module's injected FencedRedis (no client prefix) accepts a data key
 * that is a lock's own Redis name. An application that namespaces every key with one prefix
 * (`shop:` for the lock module, as docs/fencing.md's example has it, and `shop:...` for its data)
 * and hash-tags its data by entity reaches it naturally: lock `account-7` is `shop:{account-7}`
 * in Redis, and so is the account's data key `shop:{account-7}`.
 *
 * The same collision through a client `keyPrefix` equal to the lock prefix is refused
 * (test/fencing/fenced-redis-client-keyprefix-token-hash-is-lock-fence-counter.spec.ts), and
 * docs/redis-data.md says "FencedRedis writes outside the lock prefix". Through the key itself
 * it is not: the fenced SET replaces the holder's owner token with the data (and drops the
 * lease's expiry), so the holder is told it lost the lock, and nobody can take the lock again
 * until someone deletes the data.
 */
describe("a FencedRedis data key that is a lock's own Redis name (<keyPrefix>{<key>})", () => {
  const redis = useRedis();

  it('is refused before anything is written, rather than overwriting the lock', { timeout: 30_000 }, async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), keyPrefix: 'shop:' })] }).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    const fenced = moduleRef.get(FencedRedis);
    try {
      const lock = await locks.acquire('account-7', { ttl: 1_000 });
      const outcome = await fenced.set('shop:{account-7}', JSON.stringify({ balance: 100 }), lock.fencingToken).then(
        () => 'written',
        (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`,
      );
      const lockValue = await redis.get('shop:{account-7}');
      const pttl = await redis.pttl('shop:{account-7}');
      await lock.release().catch(() => undefined);
      const again = await locks.acquire('account-7', { waitTimeout: 1_500 }).then(
        (next) => next.release().then(() => 'acquired'),
        (error: unknown) => `not acquired: ${(error as Error).message}`,
      );
      expect({ outcome, again }).toEqual({ outcome: expect.stringMatching(/^TypeError: FencedRedis\.set\(\)/), again: 'acquired' });
      expect(lockValue).not.toContain('balance');
      expect(pttl).toBeGreaterThan(0);
    } finally {
      await moduleRef.close();
    }
  });
});
