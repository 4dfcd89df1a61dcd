/**
 * Found by review. The Terminus indicator on a Sentinel deployment (ioredis Sentinel options, an
 * iovalkey Sentinel client, node-redis 5 and 6 `createSentinel()`): with the master frozen, the
 * check is `down` ("no answer to PING within ..."), but names no node: both drivers left the
 * address out for a Sentinel client ("its options name the sentinels, not the master it
 * reached"), though the client knows the master it is connected to (ioredis: its socket's peer;
 * node-redis: `getMasterNode()`). docs/observability.md promises each node's `address` "when the
 * client knows it"; on Sentinel, where the master moves with each failover, the operator the
 * probe pages is the one who most needs to be told which server stopped answering.
 */
import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { createSentinel as createSentinel6 } from 'redis';
import { createSentinel as createSentinel5 } from 'redis5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { LockService } from '../../lib/index.js';
import { RedisLockHealthIndicator, type RedisLockNodeHealth } from '../../lib/terminus/index.js';
import type { Factory } from '../support/node-redis.js';
import { terminusLockModule } from '../support/terminus-app.js';

type Opened = { redis: unknown; close: () => unknown };
const CLIENTS: Record<string, (d: SentinelDeployment) => Promise<Opened>> = {
  'ioredis options': async (d) => ({ redis: { sentinels: d.sentinels, name: d.name, failoverDetector: true }, close: () => undefined }),
  iovalkey: async (d) => {
    const client = new Valkey({ sentinels: d.sentinels, name: d.name } as never);
    client.on('error', () => undefined);
    await client.ping();
    return { redis: client, close: () => client.disconnect() };
  },
  'node-redis 6': async (d) => {
    const client = (createSentinel6 as unknown as Factory)({ name: d.name, sentinelRootNodes: d.sentinels });
    client.on('error', () => undefined);
    await client.connect();
    return { redis: client, close: () => client.close() };
  },
  'node-redis 5': async (d) => {
    const client = (createSentinel5 as unknown as Factory)({ name: d.name, sentinelRootNodes: d.sentinels });
    client.on('error', () => undefined);
    await client.connect();
    return { redis: client, close: () => client.close() };
  },
};

describe('the terminus indicator on Sentinel, the master frozen', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  it.each(Object.keys(CLIENTS))('%s: names the master that does not answer, and the new one after a failover', { timeout: 60_000 }, async (name) => {
    // Each case fails the master over: the one it starts with is the last one's new master.
    const masterPort = await deployment.masterPortNow();
    const master = new Redis(masterPort, '127.0.0.1');
    const pid = Number(/process_id:(\d+)/.exec(await master.info('server'))![1]);
    master.disconnect();
    const opened = await CLIENTS[name]!(deployment);
    const moduleRef = await terminusLockModule(opened.redis, { waitTimeout: 0 });
    try {
      await (await moduleRef.get(LockService).acquire('health:sentinel')).release();
      const health = moduleRef.get(RedisLockHealthIndicator);
      const up = (await health.isHealthy('locks', { timeout: 500, showDetails: true })).locks.nodes as RedisLockNodeHealth[];
      expect(up).toEqual([expect.objectContaining({ status: 'up', address: `127.0.0.1:${masterPort}` })]);
      // Frozen for less than the sentinels' down-after-milliseconds (1 s): no failover.
      process.kill(pid, 'SIGSTOP');
      let nodes: RedisLockNodeHealth[];
      try {
        nodes = (await health.isHealthy('locks', { timeout: 500, showDetails: true }).catch((error: { response?: { locks: { nodes: RedisLockNodeHealth[] } } }) => error.response!)).locks.nodes;
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect(nodes).toEqual([expect.objectContaining({ status: 'down', address: `127.0.0.1:${masterPort}` })]);
      // After a failover the client's master is the promoted replica, and so is the address.
      const newPort = await deployment.failover();
      await expect
        .poll(async () => ((await health.isHealthy('locks', { timeout: 500, showDetails: true }).catch((error: { response?: { locks: unknown } }) => error.response!)).locks as { nodes: RedisLockNodeHealth[] }).nodes, { timeout: 20_000 })
        .toEqual([expect.objectContaining({ status: 'up', address: `127.0.0.1:${newPort}` })]);
    } finally {
      await moduleRef.close();
      await opened.close();
    }
  });
});
