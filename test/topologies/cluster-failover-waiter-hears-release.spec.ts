import { Redis } from 'ioredis';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { describe, it, type ExpectStatic } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { countAttempts, expectWokenByGrant, recordWakes } from '../support/mechanism.js';
import { shardSubscribers } from '../support/redis.js';
import { CLUSTER_CLIENTS, startReplicatedCluster, type ReplicatedCluster } from '../support/replicated-cluster.js';

const CLIENTS = CLUSTER_CLIENTS;
// Each client costs a Cluster with replicas and a failover (about 10 s): the suite runs the
// default client and node-redis 6; CLIENTS='ioredis 5,ioredis 6,iovalkey,GLIDE,node-redis 6' runs
// all five (all passed when the test was written).
const ONLY = process.env.CLIENTS?.split(',') ?? ['ioredis 5', 'node-redis 6'];

/**
 * A REAL Cluster master failover (CLUSTER FAILOVER on the lock's replica) while a holder holds
 * a lock and a waiter of another process is subscribed (SSUBSCRIBE) to its release channel:
 * the holder keeps the lock (renewed on the promoted master), and the release sent there must
 * wake the waiter by its grant message, before any attempt (a poll would have come first).
 */
// Each client on a Cluster of its own, side by side: most of a case is waiting (the Cluster's
// start, the failover, a lease), which the clients spent one after the other.
describe.concurrent('Cluster failover with a waiter', () => {
  it.for(Object.keys(CLIENTS).filter((name) => ONLY === undefined || ONLY.includes(name)))('%s: renews on the promoted master, and the waiter hears the release there', { timeout: 180_000 }, async (name, { expect }) => {
    const cluster = await startReplicatedCluster();
    try {
      await waiterHearsRelease(name, cluster, expect);
    } finally {
      await cluster.stop();
    }
  });
});

async function waiterHearsRelease(name: string, cluster: ReplicatedCluster, expect: ExpectStatic): Promise<void> {
  const key = `cluster-failover:${name.replace(/\W/g, '')}`;
  const clients = [await CLIENTS[name]!(cluster.nodes), await CLIENTS[name]!(cluster.nodes)];
  const holder = await createLockApp({ redis: clients[0]!.client as never, ttl: 4_000, renewInterval: 300 });
  const waiter = await createLockApp({ redis: clients[1]!.client as never, ttl: 4_000, renewInterval: 300 });
  const { master, replica } = await cluster.shardOf(clusterSlot(`{${key}}`));
  const oldMaster = new Redis(master, '127.0.0.1');
  const promoted = new Redis(replica, '127.0.0.1');
  try {
    const held = await holder.locks.acquire(key);
    const attempts = countAttempts(waiter.locks);
    const wakes = recordWakes(waiter.locks);
    const waiting = waiter.locks.acquire(key, { waitTimeout: 90_000 });
    waiting.catch(() => undefined);
    const channel = `lock:{${key}}:released`;
    const shardSubs = (node: Redis) => shardSubscribers(node, channel);
    await expect.poll(() => shardSubs(oldMaster), { timeout: 10_000 }).toBe(1);
    await promoted.call('READONLY');
    await expect.poll(() => promoted.exists(`lock:{${key}}`, `lock:{${key}}:queue`), { timeout: 10_000 }).toBe(2);

    await cluster.failover(replica);
    // Longer than the lease: only renewals on the promoted master keep the lock.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(held.held).toBe(true);
    expect(await promoted.pttl(`lock:{${key}}`)).toBeGreaterThan(0);

    // The waiter's sharded subscription is live again in the shard (on the promoted master; a
    // replica of the shard also carries SPUBLISH messages).
    await expect.poll(async () => (await shardSubs(promoted)) + (await shardSubs(oldMaster)), { timeout: 20_000 }).toBe(1);
    await attempts.answered();
    const before = attempts.count;
    const stepsBefore = wakes.steps.length;
    await held.release();
    const next = await Promise.race([waiting, new Promise<'not woken'>((resolve) => setTimeout(() => resolve('not woken'), 30_000))]);
    // A connection reset during the failover may have cost the waiter its place (its queue
    // entry on a promoted replica that had not caught up): one attempt may follow the grant.
    await expectWokenByGrant(expect, next, held, wakes, stepsBefore, attempts, before);
    expect(await promoted.exists(`lock:{${key}}`)).toBe(0);
  } finally {
    oldMaster.disconnect();
    promoted.disconnect();
    await Promise.all([holder.close(), waiter.close()]);
    for (const client of clients) await client.close();
  }
}
