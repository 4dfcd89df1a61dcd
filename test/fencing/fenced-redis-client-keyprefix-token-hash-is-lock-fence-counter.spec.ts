import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review of 0848a53 ("An empty keyPrefix is refused: a lock's fencing counter {K}:fence
 * was FencedRedis' token hash of tag K, WRONGTYPE both ways"). The same collision is reached
 * another way: FencedRedis on a client made with ioredis' `keyPrefix` (docs/fencing.md supports
 * one) equal to the module's `keyPrefix`, on the same Redis, an application-wide namespace, say
 * `shop:` for both. FencedRedis keeps the tokens of tag K in `<client prefix>{K}:fence`, which is
 * then `shop:{K}:fence`, the lock module's fencing counter (a string, INCR'd) of lock K: the
 * documented pattern (lock `account-7`, data `balance:{account-7}`) fails with WRONGTYPE, and
 * once FencedRedis wrote first, every acquisition of the lock fails.
 */
describe('FencedRedis on a client whose keyPrefix is the module keyPrefix', () => {
  const own = useOwnRedis();

  it('a fenced write under the lock of its hash tag is refused naming the keyPrefix, not by Redis (WRONGTYPE)', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: own.url(), keyPrefix: 'shop:' });
    const data = new Redis(own.url(), { keyPrefix: 'shop:' });
    try {
      const fenced = new FencedRedis(data);
      const lock = await app.locks.acquire('account-7');
      const written = await fenced.set('balance:{account-7}', '100', lock.fencingToken).then(
        () => 'written',
        (error: unknown) => (error as Error).message,
      );
      // Before: "WRONGTYPE Operation against a key holding the wrong kind of value ..." — the
      // token hash shop:{account-7}:fence is the lock's fencing counter.
      expect(written).toMatch(/^FencedRedis\.set\(\): its client's keyPrefix "shop:" is where a lock module of this process keeps its keys/);
      await lock.release();
    } finally {
      await app.close();
      data.disconnect();
    }
  });

  it('a fenced write made first does not stop the lock of its hash tag from being taken', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: own.url(), keyPrefix: 'shop:' });
    const data = new Redis(own.url(), { keyPrefix: 'shop:' });
    try {
      const fenced = new FencedRedis(data);
      await expect(fenced.set('balance:{account-8}', '100', 1)).rejects.toThrow(TypeError);
      const acquired = await app.locks.acquire('account-8', { waitTimeout: 0 }).then(
        (lock) => lock.release().then(() => 'acquired'),
        (error: unknown) => `${(error as Error).message} / cause: ${((error as Error).cause as Error | undefined)?.message}`,
      );
      expect(acquired).toBe('acquired');
      expect(await own.redis().type('shop:{account-8}:fence')).not.toBe('hash');
    } finally {
      await app.close();
      data.disconnect();
    }
  });
});
