/**
 * Found by review: on a Redis Cluster the board's cursor `<master index>-<SCAN cursor>` names a
 * master by its position in the client's own list (`driver.masters()`, lock-admin.ts:237-246;
 * ioredis `cluster.nodes('master')`, ioredis-driver.ts:204), which follows the order the client
 * learnt the nodes in (its seed list), not anything the cluster fixes. Two instances of the
 * application behind a load balancer (seeds listed in another order, or a DNS name that
 * resolves them shuffled) give the same cursor two meanings: a page walked across them scans one
 * master twice and never scans another, yet ends `complete: true`, so the page says every lock
 * was listed while the locks of a whole master are missing. A SCAN cursor of one master handed to
 * another also skips or repeats keys. (A reconnect that rebuilds the client's pool can reorder it
 * within one instance too.)
 */
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp } from '../support/lock-app.js';

describe('board listing on a Redis Cluster served by two app instances', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('lists every lock once when the pages alternate between the instances', { timeout: 60_000 }, async () => {
    const [first, second, third] = cluster.nodes;
    // The same cluster, its seeds listed in another order by the second instance.
    const clientA = new Cluster([first!, second!, third!]);
    const clientB = new Cluster([second!, third!, first!]);
    const a = await createLockApp({ redis: clientA });
    const b = await createLockApp({ redis: clientB });
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `spread:${i}`);
      const held = await Promise.all(keys.map((key) => a.locks.acquire(key, { ttl: 60_000 })));
      const managers = [a, b].map((app) => app.locks[LOCK_RUNNER] as LockManager);
      const seen: string[] = [];
      let cursor = '0';
      let complete = false;
      for (let page = 0; page < 50 && !complete; page++) {
        // A load balancer sends each page request to the next instance.
        const result = await listLocks(managers[page % 2]!, cursor, 5);
        seen.push(...result.locks.map((lock) => lock.key));
        cursor = result.cursor;
        complete = result.complete;
      }
      expect({ complete, listed: [...new Set(seen)].sort(), once: seen.length === new Set(seen).size }).toEqual({ complete: true, listed: [...keys].sort(), once: true });
      await Promise.all(held.map((lock) => lock.release()));
    } finally {
      await a.close();
      await b.close();
      clientA.disconnect();
      clientB.disconnect();
    }
  });
});
