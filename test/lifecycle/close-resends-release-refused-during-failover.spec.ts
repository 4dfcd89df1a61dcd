import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * A review's suspicion, confirmed: `app.close()` gives every held lock back, but a release that
 * failed then (a Sentinel failover under way: the old master answers READONLY; a Cluster slot
 * migrating: TRYAGAIN) was never sent again, although `shutdownTimeout` had time left: the lock
 * stayed in Redis for the rest of its lease and every waiter of another instance waited it out,
 * at every rolling deploy that met a failover. While the application runs such a release is sent
 * again (unconfirmed-releases.ts); at shutdown it now is too, within `shutdownTimeout`.
 */
describe('app.close() while Redis refuses writes for a moment', () => {
  const own = useOwnRedis();

  /**
   * Closes `app` while the server refuses every write for 600 ms (READONLY): it turns replica of
   * a master that is not there, keeping its data, as an old master does while a failover moves on.
   */
  async function closeWhileReadOnly(admin: Redis, app: LockApp): Promise<void> {
    await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
    try {
      const closed = app.close();
      await sleep(600);
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await closed;
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
    }
  }

  it('gives the lock back once Redis takes writes again, within shutdownTimeout', async () => {
    const admin = own.redis();
    const app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '5s' });
    await app.locks.acquire('deploy');
    await closeWhileReadOnly(admin, app);
    expect(await admin.exists('lock:{deploy}')).toBe(0);
  });

  // Found holding by the review of the fix: the other lock kinds go the same way.
  it('gives a permit, a read lock and a multi-key lock back alike', { timeout: 30_000 }, async () => {
    const admin = own.redis();
    const app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '5s' });
    await app.locks.acquire('export', { limit: 3 });
    await app.locks.acquire('doc', { mode: 'read' });
    await app.locks.acquire(['pair:a', 'pair:b']);
    expect((await admin.keys('*')).filter((key) => !key.includes('fence')).length).toBeGreaterThan(0);
    await closeWhileReadOnly(admin, app);
    expect((await admin.keys('*')).filter((key) => !key.includes('fence'))).toEqual([]);
  });
});
