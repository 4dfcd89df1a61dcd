import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { createLockApp, sleep } from '../support/lock-app.js';
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

  it('gives the lock back once Redis takes writes again, within shutdownTimeout', async () => {
    const admin = own.redis();
    const app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '5s' });
    await app.locks.acquire('deploy');
    // The server turns replica of a master that is not there: it keeps its data and refuses
    // every write (READONLY), as an old master does while a failover moves on.
    await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
    try {
      const closed = app.close();
      await sleep(600);
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await closed;
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
    }
    expect(await admin.exists('lock:{deploy}')).toBe(0);
  });
});
