/**
 * Found by the real-Redis explorer (seed 225 of `--deletes --drop-messages --target cluster
 * --workload rwlock`, with reads on the Cluster during the close: `left-alive-after-close`, a
 * `Timeout` of 447 ms set by ioredis' Cluster for its `ClusterSubscriberGroup`). The library's
 * release subscriber on a Cluster is a Cluster of its own made with `shardedSubscribers`: ioredis
 * (5.9) subscribes on a connection per master, and when one fails to connect (its master down, or
 * its connection stopped by the close while it connected) arms a timer (200 ms, doubling up to
 * 2 s) to refresh the slot map and try again, which the Cluster's `disconnect()` does not clear:
 * one armed before the close, or by the close itself, kept the process alive up to 2 s after
 * `app.close()`. Here a master is killed, and the application closes once such a retry of a
 * second or more is due.
 */
import { expect, it, onTestFinished } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';

it('app.close() while a sharded subscriber\'s retry is due leaves nothing keeping the process alive', { timeout: 90_000 }, async () => {
  const cluster = await startRedisCluster(3, { requireFullCoverage: false });
  onTestFinished(() => cluster.stop());
  const child = spawnFixture(new URL('./fixtures/close-with-cluster-slot-refresh-under-way.mjs', import.meta.url), { CLUSTER_NODES: JSON.stringify(cluster.nodes), CLOSE_AT: 'sharded-subscriber-retry' });
  // However long its start takes on a loaded machine (the test's timeout bounds it).
  await child.line(/^ready [1-9]/);
  await cluster.kill(2);
  child.endWith('go');
  const [, closed] = await child.line(/^closed (\[.*\])$/);
  const left = JSON.parse(closed!) as string[];
  expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
  await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
});
