import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp } from '../support/lock-app.js';
import { useReplicatedServer } from '../support/replicated-server.js';

/**
 * A standalone GLIDE `GlideClient` handed in with `readFrom: 'preferReplica'` (its addresses the
 * master and its replica), so that the application's own reads go to the replica: the library's
 * plain reads (`inspect()`, `isLocked()`, the lock board's SCAN) went there too, and a replica that had not applied the
 * acquire yet reported a lock held by this very process as free. The Cluster case routes them to
 * the slot's master; a standalone client takes no route. The replica is held behind on purpose:
 * `CLIENT PAUSE WRITE` on it stops it applying its master's stream while it still answers reads.
 */
describe('standalone GLIDE client reading from its replica', () => {
  const pair = useReplicatedServer();

  it('inspect(), isLocked() and the board see the lock this process holds', { timeout: 30_000 }, async () => {
    const client = await GlideClient.createClient({
      addresses: [{ host: '127.0.0.1', port: pair.master.port }, { host: '127.0.0.1', port: pair.replica.port }],
      requestTimeout: 2_000,
      readFrom: 'preferReplica',
    });
    const behind = new Redis(pair.replica.url);
    const app = await createLockApp({ redis: client as unknown as RedisLockModuleOptions['redis'] });
    try {
      expect(await behind.call('CLIENT', 'PAUSE', '10000', 'WRITE')).toBe('OK');
      const held = await app.locks.acquire('report');
      // The replica has not applied it: a read there says free.
      expect(await behind.get('lock:{report}')).toBeNull();
      for (let i = 0; i < 4; i++) {
        const seen = await app.locks.inspect('report');
        expect(seen.held, `inspect() #${i + 1}`).toBe(true);
        expect(seen.fencingToken).toBe(held.fencingToken);
        expect(await app.locks.isLocked('report'), `isLocked() #${i + 1}`).toBe(true);
      }
      const listed = await listLocks(app.locks[LOCK_RUNNER] as LockManager, '0', 100);
      expect(listed.locks.map((lock) => lock.key)).toEqual(['report']);
      await held.release();
    } finally {
      await behind.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      behind.disconnect();
      await app.close();
      client.close();
    }
  });
});
