/**
 * Review of 4dbaa62. WRONG: `forgetClosedSockets` (now `readyForPromptClose`, ioredis-prompt-close.ts)
 * reads a Cluster's `subscriber.subscriber` and skips it only when `undefined`; ioredis'
 * ClusterSubscriber holds `null` there whenever its node pool is empty (every master down, the
 * Cluster waiting to reconnect; also before it ever connected). `forgetClosedSocket(null)` then
 * throws a TypeError ("reading 'connector'") inside `disconnectQuietly`, before
 * `connection.disconnect()`: the library's own duplicate Cluster (the release subscriber) is
 * never disconnected and keeps reconnecting for ever, and `backend.close()` stops there
 * (`store.close()` and the module's own connections are skipped). Nest swallows the failing
 * shutdown hook, so `app.close()` resolves, and the process never exits. Before 4dbaa62,
 * `disconnectQuietly` read the same field null-safely.
 * RIGHT: after `app.close()` (and the owner's `cluster.disconnect()`), the process exits on its
 * own, with every master still down (ioredis' own slot-refresh connections of the Cluster may
 * leave a 2 s timer: the poll is generous; without the fix the process never exits).
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';

describe('app.close() with a Cluster handed in whose masters are all down', () => {
  it('lets the process exit (the library disconnects its own subscriber Cluster)', { timeout: 90_000 }, async () => {
    const cluster = await startRedisCluster(3, { requireFullCoverage: false });
    onTestFinished(() => cluster.stop());
    const child = spawnFixture(new URL('./fixtures/close-with-redis-down.mjs', import.meta.url), { CLUSTER_NODES: JSON.stringify(cluster.nodes) });
    // However long its start takes on a loaded machine (the test's timeout bounds it).
    await child.line(/^ready$/);
    for (const index of [0, 1, 2]) await cluster.kill(index);
    child.endWith('go');
    await child.line(/^closed\b/);
    await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
  });
});
