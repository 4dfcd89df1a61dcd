import { describe, expect, it } from 'vitest';
import { RedisLockHealthIndicator, type RedisLockNodeHealth } from '../../lib/terminus/index.js';
import { openClient } from '../support/handed-clients.js';
import { usePartialCluster } from '../support/redis-cluster.js';
import { terminusLockModule } from '../support/terminus-app.js';

/**
 * Found by review (rv31, observability). docs/observability.md: "On a Redis Cluster it PINGs every master of
 * the client's slot map, not one arbitrary node: a master that is frozen ... reads `down` by
 * address". With a GLIDE Cluster client configured as docs/deployment.md shows it
 * (`requestTimeout: 2_000`, the tests' own handed client too), the check first reads CLUSTER
 * SLOTS and CLUSTER NODES from a random node (glide-driver.ts `topology()`), and falls back to
 * the last map only when that read *rejects*: GLIDE rejects after its requestTimeout, later than
 * the check's 1000 ms. When the read goes to the frozen master (most checks: two reads, each to a
 * random node of three), the whole check spends its budget on it and answers one anonymous node,
 * `{ status: 'down', error: 'no answer to PING within 1000 ms' }`: no master named, the healthy
 * ones not reported, and the error names a PING that was never the one waited for.
 */
describe('Health on a GLIDE Cluster with a frozen master (requestTimeout above the check timeout)', () => {
  const partial = usePartialCluster();

  it('names every master in every check, the frozen one down by its address', { timeout: 90_000 }, async () => {
    const handed = await openClient('GLIDE', partial.cluster.nodes); // requestTimeout: 2_000, as docs/deployment.md
    const moduleRef = await terminusLockModule(handed.client);
    const addresses = partial.cluster.nodes.map((node) => `${node.host}:${node.port}`).sort();
    const frozen = `${partial.cluster.nodes[2]!.host}:${partial.cluster.nodes[2]!.port}`;
    try {
      const indicator = moduleRef.get(RedisLockHealthIndicator);
      const before = (await indicator.isHealthy('locks', { showDetails: true })).locks.nodes as RedisLockNodeHealth[];
      expect(before.map((node) => node.address)).toEqual(addresses);
      partial.cluster.pause(2);
      const seen: (string | undefined)[][] = [];
      for (let i = 0; i < 8; i++) {
        const nodes = (await indicator.isHealthy('locks', { timeout: 1_000, showDetails: true })).locks.nodes as RedisLockNodeHealth[];
        seen.push(nodes.map((node) => `${node.address}=${node.status}`));
      }
      const named = addresses.map((address) => `${address}=${address === frozen ? 'down' : 'up'}`);
      expect(seen).toEqual(Array.from({ length: 8 }, () => named));
    } finally {
      partial.cluster.resume(2);
      await moduleRef.close();
      handed.close();
    }
  });
});
