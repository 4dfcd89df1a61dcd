import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from '../support/redis-server.js';
import { createLockApp, sleep } from '../support/lock-app.js';

/**
 * One Redis, as test/quorum/renewal-batch-beside-foreign-lock-key-keeps-the-others.spec.ts: the
 * watchdog's batch (RENEW_MANY) read each lock with redis.call('GET'), so a hash written at one
 * lock's key failed the call with WRONGTYPE and every lock of the batch went unconfirmed, all four
 * lost as their leases ran out. That lock alone is lost now; its release names the key.
 */
describe('one Redis: renewals batched with a lock whose key holds a hash', () => {
  it('the other locks of the batch stay held', { timeout: 30_000 }, async () => {
    const server = await startRedisServer();
    const admin = new Redis(server.url);
    const app = await createLockApp({ redis: server.url, ttl: 1_000, renewInterval: 200 });
    try {
      const held = await Promise.all(['a', 'b', 'c', 'd'].map((key) => app.locks.acquire(`batch-${key}`)));
      await admin.del('lock:{batch-a}');
      await admin.hset('lock:{batch-a}', 'f', '1');
      await sleep(2_500);
      expect(held.map((lock) => lock.held)).toEqual([false, true, true, true]);
      await Promise.all(held.slice(1).map((lock) => lock.release()));
    } finally {
      admin.disconnect();
      await app.close();
      await server.stop();
    }
  });
});
