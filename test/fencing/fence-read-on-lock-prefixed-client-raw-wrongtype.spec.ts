import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

// cbcbed3 refuses FencedRedis on a client whose keyPrefix is a running lock module's, naming the
// prefix, but only in set()/hset() (RedisFencedStore.checkSlot). fence(key) reads the same token
// hash, <prefix>{tag}:fence, which is then the lock's fencing counter (a string): it rejects with
// Redis' raw WRONGTYPE ReplyError, naming neither FencedRedis.fence() nor the prefix.
describe('FencedRedis.fence() on a client whose keyPrefix is the lock module keyPrefix', () => {
  const own = useOwnRedis();

  it('is refused naming the method and the keyPrefix, not by Redis (WRONGTYPE)', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: own.url(), keyPrefix: 'shop:' });
    const data = new Redis(own.url(), { keyPrefix: 'shop:' });
    try {
      const fenced = new FencedRedis(data);
      const lock = await app.locks.acquire('account-7');
      const read = await fenced.fence('balance:{account-7}').then(
        (value) => `value ${value}`,
        (error: Error) => `${error.constructor.name}: ${error.message}`,
      );
      // Fails: "ReplyError: WRONGTYPE Operation against a key holding the wrong kind of value ..."
      expect(read).toMatch(/^TypeError: FencedRedis\.fence\(\): its client's keyPrefix "shop:"/);
      await lock.release();
    } finally {
      await app.close();
      data.disconnect();
    }
  });
});
