import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';

/**
 * A 3-master Redis Cluster of the test file's own, started before its tests (slots assigned,
 * every master answering) and stopped after them, with `admin`, an ioredis Cluster client on
 * it for looking from the outside (both read once `beforeAll` ran). Register it before the file's own `afterAll` hooks: those run
 * first (last registered, first run), while the cluster still answers.
 */
export function useRedisCluster(): { readonly cluster: RedisCluster; readonly admin: Cluster } {
  let cluster: RedisCluster | undefined;
  let admin: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    admin = new Cluster(cluster.nodes);
    await admin.ping();
  }, 60_000);
  afterAll(async () => {
    admin?.disconnect();
    await cluster?.stop();
  });
  return {
    get cluster() {
      return cluster!;
    },
    get admin() {
      return admin!;
    },
  };
}

/** A slot's master (`source`) and another master (`target`), each with its id and address, and a plain connection to each (the caller disconnects them). */
export async function slotMasters(admin: Cluster, slot: number): Promise<{ source: { id: string; address: string }; target: { id: string; address: string }; src: Redis; dst: Redis }> {
  const nodes = String(await admin.cluster('NODES'))
    .split('\n')
    .filter((line) => line.includes('master'))
    .map((line) => ({ id: line.split(' ')[0]!, address: line.split(' ')[1]!.split('@')[0]! }));
  const source = nodes.find((node) => node.address === admin.slots[slot]![0])!;
  const target = nodes.find((node) => node !== source)!;
  const connect = (address: string) => new Redis(Number(address.split(':')[1]), address.split(':')[0]!);
  return { source, target, src: connect(source.address), dst: connect(target.address) };
}

/** A lock name (`<tag>-<n>`) whose keys live on the master at `index` of `cluster.nodes`. */
export async function lockNameOnMaster(cluster: RedisCluster, index: number, tag: string): Promise<string> {
  const node = new Redis(cluster.nodes[0]!.port, cluster.nodes[0]!.host);
  const slots = (await node.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  node.disconnect();
  const port = cluster.nodes[index]!.port;
  for (let i = 0; ; i++) {
    const name = `${tag}-${i}`;
    const slot = clusterSlot(`lock:{${name}}`);
    if (slots.find(([from, to]) => slot >= from && slot <= to)![2][1] === port) return name;
  }
}

/**
 * A 3-master Cluster of the test file's own that keeps serving with a master down
 * (`cluster-require-full-coverage no`), for tests that freeze or kill master 2: it is resumed
 * before the cluster stops. `keyOn(index, tag)` names a lock on a given master.
 */
export function usePartialCluster(): { readonly cluster: RedisCluster; keyOn(index: number, tag: string): Promise<string> } {
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(3, { requireFullCoverage: false });
  }, 60_000);
  afterAll(async () => {
    cluster?.resume(2);
    await cluster?.stop();
  });
  return {
    get cluster() {
      return cluster!;
    },
    keyOn: (index, tag) => lockNameOnMaster(cluster!, index, tag),
  };
}
