/**
 * Found by the real-Redis explorer (seed 225 of `--deletes --drop-messages --target cluster
 * --workload rwlock`, with reads on the Cluster during the close: `left-alive-after-close`, a
 * `Timeout` of 100 ms set by ioredis' `StandaloneConnector.disconnect` from its
 * `getInfoFromNode`). A slot refresh of the library's own Cluster asks a node on a connection of
 * its own, which the library ends at the close (`disconnectPromptly`); its question, unanswered,
 * then fails, and ioredis disconnects that connection again: its connector still holds the socket
 * that closed already, and arms another wait for that socket's close, which never comes (the
 * redis/ioredis#1247 shape). Here every master is frozen while the refresh asks, so that the
 * question is never answered, and what is left is read as soon as every socket has closed.
 */
import { expect, it, onTestFinished } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';

it('app.close() during a slot refresh leaves no timer once every socket has closed', { timeout: 90_000 }, async () => {
  const cluster = await startRedisCluster(3, { requireFullCoverage: false });
  onTestFinished(async () => {
    for (const index of [0, 1, 2]) cluster.resume(index);
    await cluster.stop();
  });
  const child = spawnFixture(new URL('./fixtures/close-with-cluster-slot-refresh-under-way.mjs', import.meta.url), { CLUSTER_NODES: JSON.stringify(cluster.nodes), LEFT_WHEN: 'sockets-closed' });
  await expect.poll(() => child.output(), { timeout: 20_000 }).toMatch(/ready [1-9]/);
  for (const index of [0, 1, 2]) cluster.pause(index);
  child.endWith('go');
  await expect.poll(() => child.output(), { timeout: 10_000 }).toMatch(/closed (\[.*\])/);
  const left = JSON.parse(/closed (\[.*\])/.exec(child.output())![1]!) as string[];
  expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
  await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
});
