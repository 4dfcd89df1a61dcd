/**
 * A Cluster client that knows no masters yet learns them first, within the check's timeout: a
 * Valkey GLIDE Cluster client reads CLUSTER NODES before its first check, from any node. When
 * that read timed out (the Cluster frozen: GLIDE gives up on a node only after its
 * requestTimeout, 2 s as docs/deployment.md sets it, past the check's), the check answered
 * `{ status: 'down', error: 'no answer to PING within 300 ms' }`, though no PING was sent: an
 * operator went looking for a master that did not answer a PING, where the client did not know
 * its masters yet (review suspicion, forty-fifth session). The error now says that the discovery
 * of the Cluster's masters timed out, and that no node was PINGed.
 */
import { describe, expect, it } from 'vitest';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { openClient } from '../support/handed-clients.js';
import { usePartialCluster } from '../support/redis-cluster.js';
import { terminusLockModule } from '../support/terminus-app.js';

describe('the Terminus indicator on a GLIDE Cluster client whose discovery of its masters times out', () => {
  const partial = usePartialCluster();

  it('says the discovery timed out, not that a PING went unanswered', { timeout: 60_000 }, async () => {
    const { cluster } = partial;
    const handed = await openClient('GLIDE', cluster.nodes);
    const moduleRef = await terminusLockModule(handed.client);
    const indices = cluster.nodes.map((_, index) => index);
    // Every node frozen before the first check: whichever GLIDE asks for the map never answers.
    for (const index of indices) cluster.pause(index);
    try {
      const result = await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks', { timeout: 300 });
      expect(result.locks.status).toBe('down');
      expect(result.locks.nodes).toEqual([{ status: 'down', error: "the Cluster's masters were not discovered within 300 ms: no node was PINGed" }]);
    } finally {
      for (const index of indices) cluster.resume(index);
    }
    // Once the Cluster answers, the masters are learned and PINGed.
    await expect.poll(async () => (await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks', { timeout: 1_000 })).locks.status, { timeout: 15_000 }).toBe('up');
    await moduleRef.close();
    handed.close();
  });
});
