import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../scripts/redis-cluster.mjs';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import type { LockManager } from '../lib/core/engine/lock-manager.js';
import { listLocks } from '../lib/core/stores/redis/lock-admin.js';
import { LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { RedisLockHealthIndicator } from '../lib/terminus/index.js';
import { openClient } from './support/handed-clients.js';
import { sleep } from './support/lock-app.js';
import { terminusLockModule } from './support/terminus-app.js';

/**
 * Found by review (GLIDE Cluster): a Redis 7 Cluster that announces its nodes by hostname
 * (`cluster-announce-hostname`, `cluster-preferred-endpoint-type hostname`, as TLS deployments
 * with certificates for names do). CLUSTER SLOTS names each node `localhost`; CLUSTER NODES
 * still gives `127.0.0.1:port@cport,localhost`. GLIDE connects to the names CLUSTER SLOTS
 * gives; the GLIDE driver reads the masters from CLUSTER NODES (its ip:port field) and routes
 * the per-master calls (terminus PING, lock-board SCAN, INFO) `routeByAddress` to that IP, a
 * connection GLIDE does not have: each such call times out (GLIDE's TimeoutError).
 */
const CLIENTS = {
  'ioredis Cluster': async (nodes: { host: string; port: number }[]) => {
    const client = new Cluster(nodes);
    client.on('error', () => undefined);
    await client.ping();
    return { client, close: () => client.disconnect() };
  },
  GLIDE: async (nodes: { host: string; port: number }[]) => {
    const { client, close } = await openClient('GLIDE', nodes);
    return { client, close };
  },
};

describe('a Redis 7 Cluster announcing hostnames', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    for (const { host, port } of cluster.nodes) {
      const node = new Redis(port, host);
      await node.config('SET', 'cluster-announce-hostname', 'localhost');
      await node.config('SET', 'cluster-preferred-endpoint-type', 'hostname');
      node.disconnect();
    }
    // Until every node's CLUSTER SLOTS names every master by hostname (gossip).
    for (const { host, port } of cluster.nodes) {
      const node = new Redis(port, host);
      for (;;) {
        const slots = (await node.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
        if (slots.every((range) => range[2][0] === 'localhost')) break;
        await sleep(100);
      }
      node.disconnect();
    }
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  describe.each(Object.keys(CLIENTS) as (keyof typeof CLIENTS)[])('through a %s client', (name) => {
    it('the terminus indicator finds every master up, the lock board lists the locks, renewals go per master', { timeout: 60_000 }, async () => {
      const { client, close } = await CLIENTS[name](cluster.nodes);
      const moduleRef = await terminusLockModule(client);
      try {
        const locks = moduleRef.get(LockService);
        const held = await Promise.all(['a', 'b', 'c', 'd'].map((key) => locks.acquire(`host:${key}`)));
        const health = await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks').then(
          (result) => result.locks,
          (error: { causes?: { locks?: unknown } }) => error.causes?.locks ?? error,
        );
        const listed = await listLocks(locks[LOCK_RUNNER] as LockManager, '0', 100).then(
          (page) => page.locks.map((lock) => lock.key).sort(),
          (error: Error) => `${error.constructor.name}: ${error.message}`,
        );
        const perMaster = await new LockScripts(client as never).perMasterRenewals().catch((error: Error) => `${error.constructor.name}: ${error.message}`);
        await Promise.all(held.map((lock) => lock.release()));
        expect({ status: (health as { status?: string }).status, listed, perMaster }).toEqual({ status: 'up', listed: ['host:a', 'host:b', 'host:c', 'host:d'], perMaster: true });
      } finally {
        await moduleRef.close();
        close();
      }
    });
  });
});
