import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { nodeRedisClient, nodeRedisCluster, type TestClient } from '../support/node-redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';
import { clientsOf, useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Asked in the fortieth session: a Cluster client given as one entry of a quorum is accepted
 * without a check; does it work? It does: a lock's keys share one hash slot (`lock:{name}`), so
 * the quorum scripts run on the master of that slot, and the Cluster is one vote. Kept as a
 * spec for both drivers' cluster clients: granted, renewed and released there as on a master.
 */
describe('quorum: a Cluster client as one of the masters', () => {
  const env = useRedisCluster();
  const servers = useQuorumServers();

  async function holdsRenewsAndReleases(app: LockApp, name: string): Promise<void> {
    const key = `lock:{${name}}`;
    const lock = await app.locks.acquire(name);
    // The round ends at an agreeing majority: the Cluster's grant may land a moment later.
    await expect.poll(() => env.admin.get(key)).not.toBeNull();
    // Cut short here: only a renewal (every third of the 1.5 s lease) puts it back above a second.
    await env.admin.pexpire(key, 1_000);
    await expect.poll(() => env.admin.pttl(key), { timeout: 10_000 }).toBeGreaterThan(1_000);
    expect(lock.fencingToken).toBeGreaterThan(0);
    await lock.release();
    await expect.poll(() => env.admin.exists(key)).toBe(0);
  }

  it('works on an ioredis Cluster', { timeout: 60_000 }, async () => {
    const cluster = new Cluster(env.cluster.nodes);
    const [a, b] = clientsOf(servers);
    const app = await createLockApp({ redis: [cluster, a!, b!] as never, ttl: 1_500 });
    try {
      await holdsRenewsAndReleases(app, 'io-cluster');
    } finally {
      await app.close();
      cluster.disconnect();
      a!.disconnect();
      b!.disconnect();
    }
  });

  it('works on a node-redis cluster', { timeout: 60_000 }, async () => {
    const clients: TestClient[] = [await nodeRedisCluster(env.cluster.nodes as never), await nodeRedisClient(servers[0]!.url), await nodeRedisClient(servers[1]!.url)];
    const app = await createLockApp({ redis: clients as never, ttl: 1_500 });
    try {
      await holdsRenewsAndReleases(app, 'node-cluster');
    } finally {
      await app.close();
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
