import { Redis } from 'ioredis';
import { describe, it, type ExpectStatic } from 'vitest';
import { CLUSTER_CLIENTS, startReplicatedCluster, type ReplicatedCluster } from '../support/replicated-cluster.js';
import { createLockApp } from '../support/lock-app.js';

/**
 * Found by review. A node-redis 6 Cluster (3 masters with replicas), the master of a lock's slot
 * killed and its replica promoted. A waiter that gives up while no master owns the slot has its
 * sharded release channel given up: the driver's SUNSUBSCRIBE waits on node-redis' pub/sub client
 * of the dead node; node-redis' topology refresh (5 s after the first reconnection attempt)
 * moved that client's listeners, ours among them, to the promoted replica and rejected the
 * SUNSUBSCRIBE ("Disconnects client"): the channel stayed subscribed there for the application's
 * life. Trying the SUNSUBSCRIBE again, as on Sentinel, found no pub/sub client on the new owner
 * yet and did nothing before node-redis' SSUBSCRIBE landed. The driver now takes its listener off
 * the listeners node-redis moves and subscribes again only the channels still wanted (the kept
 * one here, and one given up during the outage and wanted again before the refresh). ioredis 5, iovalkey and GLIDE passed already (node-redis 5 does not follow a killed
 * master at all, a documented limit).
 */
const ONLY = (process.env.CLIENTS ?? 'node-redis 6,ioredis 5,iovalkey,GLIDE').split(',');

// Each driver on a Cluster of its own, side by side: most of a case is waiting (the failover,
// node-redis' topology refresh), which four in a row spent one after the other.
describe.concurrent('a Cluster', () => {
  it.for(ONLY)('%s: a channel given up while its master is down stays given up', { timeout: 180_000 }, async (name, { expect }) => {
    const cluster = await startReplicatedCluster();
    try {
      await givenUpStaysGivenUp(name, cluster, expect);
    } finally {
      await cluster.stop();
    }
  });
});

async function givenUpStaysGivenUp(name: string, cluster: ReplicatedCluster, expect: ExpectStatic): Promise<void> {
  const admin = new Redis(cluster.nodes[0]!.port, '127.0.0.1');
  const slotOf = async (key: string): Promise<number> => Number(await admin.cluster('KEYSLOT', `lock:{${key}}`));
  const tag = name.replace(/\W/g, '');
  const kept = `kept:${tag}`;
  const keptShard = await cluster.shardOf(await slotOf(kept));
  const sameShard = async (prefix: string): Promise<string> => {
    for (let i = 0; ; i++) {
      const candidate = `${prefix}:${tag}:${i}`;
      if ((await cluster.shardOf(await slotOf(candidate))).master === keptShard.master) return candidate;
    }
  };
  const gaveUp = await sameShard('gave-up');
  // Given up during the outage too, and wanted again before node-redis moves the listeners.
  const again = await sameShard('again');
  admin.disconnect();
  const opened = [await CLUSTER_CLIENTS[name]!(cluster.nodes), await CLUSTER_CLIENTS[name]!(cluster.nodes)];
  const holder = await createLockApp({ redis: opened[0]!.client as never, ttl: 20_000, renewInterval: 500 });
  const waiter = await createLockApp({ redis: opened[1]!.client as never, ttl: 20_000, renewInterval: 500 });
  const shardNumSub = async (port: number, channel: string): Promise<number> => {
    const node = new Redis(port, '127.0.0.1');
    try {
      return ((await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1];
    } finally {
      node.disconnect();
    }
  };
  try {
    const held = [await holder.locks.acquire(kept), await holder.locks.acquire(gaveUp)];
    const heldAgain = await holder.locks.acquire(again);
    const waiting = waiter.locks.acquire(kept, { waitTimeout: 60_000 });
    waiting.catch(() => undefined);
    const givingUp = waiter.locks.acquire(gaveUp, { waitTimeout: 1_500 });
    givingUp.catch(() => undefined);
    const givingUpAgain = waiter.locks.acquire(again, { waitTimeout: 1_500 });
    givingUpAgain.catch(() => undefined);
    for (const key of [kept, gaveUp, again]) await expect.poll(() => shardNumSub(keptShard.master, `lock:{${key}}:released`), { timeout: 10_000 }).toBe(1);
    const crashed = cluster.crash(keptShard.master, keptShard.replica);
    await givingUp.catch(() => undefined);
    await givingUpAgain.catch(() => undefined);
    const waitingAgain = waiter.locks.acquire(again, { waitTimeout: 60_000 });
    waitingAgain.catch(() => undefined);
    await crashed;
    await expect.poll(() => shardNumSub(keptShard.replica, `lock:{${kept}}:released`), { timeout: 30_000 }).toBe(1);
    // Wanted again during the outage: subscribed on the promoted replica once the client follows
    // it, which under load may come after the kept channel's (iovalkey's once failed a read 3 s on).
    await expect.poll(() => shardNumSub(keptShard.replica, `lock:{${again}}:released`), { timeout: 30_000 }).toBe(1);
    // The given-up channel must stay given up past node-redis' move of the listeners.
    await new Promise((r) => setTimeout(r, 3_000));
    const leaked = await shardNumSub(keptShard.replica, `lock:{${gaveUp}}:released`);
    const wantedAgain = await shardNumSub(keptShard.replica, `lock:{${again}}:released`);
    for (const lock of held) await lock.release();
    await (await waiting).release();
    await heldAgain.release();
    await (await waitingAgain).release();
    expect(leaked).toBe(0);
    expect(wantedAgain).toBe(1);
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
    for (const o of opened) await o.close();
  }
}
