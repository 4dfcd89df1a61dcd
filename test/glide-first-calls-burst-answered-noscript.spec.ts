/**
 * Found by review (thirty-fifth session). docs/deployment.md, GLIDE: "a script's first call in the
 * process goes as `EVAL`, and the script is loaded on every master in the background, `SCRIPT LOAD`
 * that nobody waits for, so that the other masters do not answer `NOSCRIPT` first: GLIDE's core
 * logs each `NOSCRIPT` as a warning", which should come only after a restart or a failover. Only
 * the very first call went as `EVAL`: on a Cluster, the calls made while that `SCRIPT LOAD` was on
 * its way (a burst of locks as the application starts: its jobs, its first requests) went as
 * `EVALSHA` to masters the load had not reached yet, were answered `NOSCRIPT` and sent again: a
 * round trip more each, and a GLIDE warning line each in the application's log at every start
 * (14 for 20 locks here). The calls go as `EVAL` until the load is answered. Counted by the
 * servers (`INFO errorstats`). One server was spared: the load goes ahead of the calls on its one
 * connection.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { handedLockApp, openClient, type Target } from './support/handed-clients.js';
import { useRedisCluster } from './support/redis-cluster.js';

/** NOSCRIPT answers a server gave since its error stats were reset. */
async function noscripts(node: Redis): Promise<number> {
  return Number(/errorstat_NOSCRIPT:count=(\d+)/.exec(String(await node.info('errorstats')))?.[1] ?? 0);
}

async function burst(target: Target, nodes: Redis[]): Promise<number> {
  for (const node of nodes) {
    await node.script('FLUSH');
    await node.config('RESETSTAT');
  }
  const app = await handedLockApp(await openClient('GLIDE', target));
  try {
    const keys = Array.from({ length: 20 }, (_, i) => `burst:${i}`);
    const held = await Promise.all(keys.map((key) => app.locks.acquire(key)));
    await Promise.all(held.map((lock) => lock.release()));
  } finally {
    await app.close();
  }
  let answered = 0;
  for (const node of nodes) answered += await noscripts(node);
  return answered;
}

describe('a GLIDE Cluster client: a burst of first lock calls', () => {
  const redisCluster = useRedisCluster();
  it('is never answered NOSCRIPT', async () => {
    const masters = redisCluster.cluster.nodes.map(({ host, port }) => new Redis(port, host));
    try {
      expect(await burst(redisCluster.cluster.nodes, masters)).toBe(0);
    } finally {
      for (const master of masters) master.disconnect();
    }
  });
});
