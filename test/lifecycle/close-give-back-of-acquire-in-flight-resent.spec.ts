/**
 * Guards the fix of 5017905: the give-back of a lock an acquire in flight obtains
 * while app.close() runs, refused once with READONLY, is sent again within shutdownTimeout.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { blockRedis } from '../support/block-redis.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('app.close() with an acquire in flight, while Redis refuses writes for a moment', () => {
  const own = useOwnRedis();

  it('gives the lock the acquire obtained back once Redis takes writes again, within shutdownTimeout', { timeout: 30_000 }, async () => {
    const admin = own.redis();
    const failover = new Redis(own.url());
    await failover.ping();
    const app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '5s' });
    await (await app.locks.acquire('warm-up')).release();
    try {
      // Redis busy for a moment: the acquire, then the turn to read-only, wait in its sockets.
      const { ended } = await blockRedis(own.url(), 800);
      const call = app.locks.acquire('deploy').then(
        () => 'acquired',
        (error: Error) => error.constructor.name,
      );
      await sleep(50);
      const readOnly = failover.call('REPLICAOF', '127.0.0.1', String(await freePort()));
      await sleep(50);
      const closed = app.close();
      await ended;
      await readOnly;
      // The old master takes writes again 600 ms later, well within shutdownTimeout.
      await sleep(600);
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await closed;
      // The mechanism: the acquire ran in Redis (it made the key's fencing counter) and the call was refused.
      expect(await admin.exists('lock:{deploy}:fence')).toBe(1);
      expect(await call).toBe('LockNotAcquiredError');
      expect(await admin.exists('lock:{deploy}')).toBe(0);
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
      failover.disconnect();
    }
  });
});
