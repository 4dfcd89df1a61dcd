/**
 * ioredis' `disconnect()` ends the socket and waits up to its `disconnectTimeout` (2 s by
 * default, a timer that keeps the process alive) for the socket to close. Found by the chaos
 * suite (`redis-kill.spec.ts`: a holder that lost its lock when Redis was killed took 2 s to
 * exit after app.close()), then by review for a frozen Redis:
 * - killed: a connection waiting to reconnect holds a socket that closed already, whose close
 *   never comes again (redis/ioredis#1247);
 * - frozen (SIGSTOP; a partition is alike): the socket is open, and Redis never closes its side;
 * - Sentinel options with the master and every sentinel down: ioredis asks each sentinel on a
 *   short-lived client of its own, which it disconnects after the sentinel refused it.
 * The library's own connections (its client made from options, its subscriber connection) must
 * let the process exit at once. The fixture's client waits 10 minutes (`disconnectTimeout`), so
 * a connection that waited for ioredis' timer would hold the process that long; half a second
 * after the close, only the standard streams may keep its event loop alive.
 */
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { startSentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { spawnFixture } from '../support/fixture-process.js';
import { startRedisServer } from '../support/redis-server.js';

describe('app.close() with Redis down or frozen', () => {
  for (const fault of ['killed', 'frozen', 'killed with its sentinels', 'a Cluster master frozen'] as const) {
    it(`lets the process exit on its own, Redis ${fault}`, { timeout: 60_000 }, async () => {
      let env: Record<string, string>;
      let stop: () => Promise<unknown>;
      if (fault === 'a Cluster master frozen') {
        // Found by the real-Redis explorer (left-alive-after-close, seed 1012): the library's
        // subscriber Cluster subscribes on a connection of ioredis' own per master
        // (`ShardedSubscriber`), made from the node's address alone, which waited the full 2 s.
        const cluster = await startRedisCluster(3, { requireFullCoverage: false });
        onTestFinished(() => cluster.stop());
        const admin = new Redis(cluster.nodes[0]!.port, cluster.nodes[0]!.host);
        const slot = Number(await admin.cluster('KEYSLOT', 'lock:{held}'));
        const ranges = await admin.cluster('SLOTS');
        admin.disconnect();
        const owner = cluster.nodes.findIndex((node) => ranges.some(([from, to, master]) => from <= slot && slot <= to && master?.[1] === node.port));
        env = { CLUSTER_NODES: JSON.stringify(cluster.nodes) };
        stop = async () => cluster.pause(owner);
      } else if (fault === 'killed with its sentinels') {
        const deployment = await startSentinelDeployment();
        onTestFinished(() => deployment.stop());
        env = { SENTINELS: JSON.stringify(deployment.sentinels), NAME: deployment.name };
        stop = () => deployment.stop();
      } else {
        const server = await startRedisServer();
        onTestFinished(async () => {
          server.resume();
          await server.stop({ kill: true }).catch(() => undefined);
        });
        env = { REDIS_URL: server.url };
        stop = async () => (fault === 'killed' ? server.stop({ kill: true }) : server.pause());
      }
      const child = spawnFixture(new URL('./fixtures/close-with-redis-down.mjs', import.meta.url), env);
      // However long its start takes on a loaded machine (the test's timeout bounds it).
      await child.line(/^ready$/);
      await stop();
      child.endWith('go');
      const [, closed] = await child.line(/^closed (\[.*\])$/);
      const left = JSON.parse(closed!) as string[];
      expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
      await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
    });
  }
});
