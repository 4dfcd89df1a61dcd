import { Cluster } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { createLockApp } from '../support/lock-app.js';

/**
 * Found by review (drivers). 325005c's shutdown warning for a client handed in that gave up
 * reconnecting (not closed by anyone) is shown on one Redis only. An ioredis or iovalkey Cluster
 * gives up when every master is out of reach at once (a whole Cluster restarted, a network cut)
 * and its `clusterRetryStrategy` returns no delay: the warning said so, but told the application
 * to give the client "a retryStrategy that keeps trying", the option of one Redis, which a
 * Cluster's nodes do not use for this (ioredis connects them with none, and asks the Cluster's own
 * `clusterRetryStrategy`). It now names `clusterRetryStrategy` for a Cluster.
 */
describe('a Cluster client handed in whose clusterRetryStrategy gave up before app.close()', () => {
  const clients = {
    ioredis: (nodes: { host: string; port: number }[]) => new Cluster(nodes, { clusterRetryStrategy: () => null }),
    iovalkey: (nodes: { host: string; port: number }[]) => new ValkeyCluster(nodes, { clusterRetryStrategy: () => null }),
  };
  for (const [label, make] of Object.entries(clients)) {
    it(`is said to have given up reconnecting, naming clusterRetryStrategy (${label})`, { timeout: 60_000 }, async () => {
      const cluster = await startRedisCluster(3);
      onTestFinished(() => cluster.stop());
      const client = make(cluster.nodes);
      client.on('error', () => undefined);
      onTestFinished(() => client.disconnect());
      await client.ping();
      const app = await createLockApp({ redis: client as Cluster, shutdownTimeout: 600 });
      let closed = false;
      onTestFinished(() => (closed ? undefined : app.close()));
      await app.locks.acquire(`gave-up:${label}`, { ttl: 30_000 });
      const ended = new Promise((resolve) => client.once('end', resolve));
      for (const index of [0, 1, 2]) await cluster.kill(index);
      await ended;
      closed = true;
      await app.close();
      const warnings = app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
      const warning = warnings.find((message) => message.includes('The Redis client handed in (redis)'));
      expect(warning, warnings.join('\n')).toMatch(/gave up reconnecting/);
      expect(warning).toMatch(/its clusterRetryStrategy returned no delay/);
      expect(warning).toMatch(/Give it a clusterRetryStrategy that keeps trying/);
      expect(warning).not.toMatch(/onModuleDestroy/);
    });
  }
});
