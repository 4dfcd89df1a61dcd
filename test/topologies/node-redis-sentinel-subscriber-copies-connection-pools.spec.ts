/**
 * Found by review. node-redis 6's Sentinel client is duplicated for the module's release
 * messages, and `duplicate()` copies every option: an application whose client has a pool of
 * master connections (`masterPoolSize`) and reads from replicas (`replicaPoolSize`) got the same
 * pools opened a second time by the module, all idle (it only subscribes), per application
 * instance: `masterPoolSize` more connections to the master and `replicaPoolSize` more to each
 * replica, where the pub/sub connection (and the one master connection node-redis always
 * opens) is all it needs.
 */
import { Redis } from 'ioredis';
import { createSentinel } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { createLockApp } from '../support/lock-app.js';
import type { Factory } from '../support/node-redis.js';
import { subscribers } from '../support/redis.js';

let deployment: SentinelDeployment;
beforeAll(async () => {
  deployment = await startSentinelDeployment();
}, 60_000);
afterAll(() => deployment?.stop());

/** Client connections on the server at `port`, the sentinels' own left out. */
async function clients(port: number): Promise<number> {
  const node = new Redis(port, '127.0.0.1');
  try {
    const list = (await node.client('LIST')) as string;
    // Ours (this admin connection) and the sentinels' (named sentinel-...) are not the application's.
    return list.split('\n').filter((line) => line.startsWith('id=') && !/ name=sentinel-/.test(line) && !/ cmd=client\|list/.test(line)).length;
  } finally {
    node.disconnect();
  }
}

it('node-redis 6 Sentinel with connection pools: the release subscriber opens no pool of its own', { timeout: 60_000 }, async () => {
  const masterPort = await deployment.masterPortNow();
  const replicaPort = masterPort === deployment.masterPort ? deployment.replicaPort : deployment.masterPort;
  const client = (createSentinel as unknown as Factory)({ name: deployment.name, sentinelRootNodes: deployment.sentinels, masterPoolSize: 4, replicaPoolSize: 2 });
  client.on('error', () => undefined);
  await client.connect();
  const app = await createLockApp({ redis: client as never });
  try {
    const before = { master: await clients(masterPort), replica: await clients(replicaPort) };
    const held = await app.locks.acquire('pools');
    // A waiter: the module opens its subscriber (a duplicate of the client) and subscribes.
    const waiting = app.locks.acquire('pools', { waitTimeout: 20_000 });
    const probe = new Redis(masterPort, '127.0.0.1');
    await expect.poll(() => subscribers(probe, 'lock:{pools}:released'), { timeout: 10_000 }).toBe(1);
    probe.disconnect();
    const after = { master: await clients(masterPort), replica: await clients(replicaPort) };
    await held.release();
    await (await waiting).release();
    // Its pub/sub connection and the one master connection node-redis always opens. Before the
    // fix: 5 more on the master (a pool of 4, and pub/sub) and 2 more on the replica.
    expect(after.master - before.master).toBeLessThanOrEqual(2);
    expect(after.replica - before.replica).toBe(0);
  } finally {
    await app.close();
    await client.close();
  }
});
