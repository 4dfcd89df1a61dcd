import { Cluster } from 'ioredis';
import { Cluster as Cluster6 } from 'ioredis6';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { afterEach, describe, expect, it } from 'vitest';
import { driverFor } from '../lib/core/stores/redis/drivers/driver-for.js';
import type { RedisClient } from '../lib/core/stores/redis/drivers/redis-client.js';
import type { ReleaseSubscriber } from '../lib/core/stores/redis/drivers/redis-driver.js';
import { sleep } from './support/lock-app.js';
import { shardSubscribers } from './support/redis.js';
import { useRedisCluster } from './support/redis-cluster.js';
import { clusterSlot } from '../lib/core/keys/cluster-slot.js';

type Nodes = { host: string; port: number }[];
const CLIENTS = {
  'ioredis 5': (nodes: Nodes) => new Cluster(nodes),
  'ioredis 6': (nodes: Nodes) => new Cluster6(nodes),
  iovalkey: (nodes: Nodes) => new ValkeyCluster(nodes),
};
type Name = keyof typeof CLIENTS;

/**
 * The release subscriber of a Cluster client, asked to subscribe while the handshake of the
 * connection that carries the channels is still unanswered (the first waiters of a process
 * subscribe right after it starts; a busy master answers late). ioredis and iovalkey send
 * (S)SUBSCRIBE at once in that state, which puts the connection in subscriber mode, and a ready
 * check (INFO) sent after it is refused. Sharded channels go on a connection per master
 * (iovalkey: ShardSubscriber's own; ioredis: its `shardedSubscribers`, with no ready check),
 * plain ones (masters before Redis 7) on the one subscriber connection of a duplicate of the
 * client, whose ready check ioredis always makes. ioredis 5 sends it after its CLIENT SETNAME
 * and SETINFO are answered, so after SUBSCRIBEs asked for meanwhile: refused, the connection
 * was dropped and the SUBSCRIBE that had waited for the handshake rejected (its waiters polled
 * until a retry). iovalkey sends INFO first; the sharded connections were not caught.
 */
// One Cluster for every client: each case uses channels of its own (named after the client and
// whether it shards), and each slot move its own slot (10902, 6901 and 11791), so that no case
// meets a slot an earlier one moved. A Cluster per client cost a start each.
const shared = useRedisCluster();

describe.each((Object.keys(CLIENTS) as Name[]).flatMap((name) => [true, false].map((sharded) => [name, sharded] as const)))(
  'the release subscriber of an %s Cluster client (sharded: %s)',
  (name, sharded) => {
    const opened: { client: { disconnect(): void }; subscriber?: ReleaseSubscriber }[] = [];
    afterEach(() => {
      for (const { client, subscriber } of opened.splice(0)) {
        subscriber?.close();
        client.disconnect();
      }
    });

    const masters = () => shared.admin.nodes('master');
      it('keeps every channel asked for while the connection carrying it is being set up', async () => {
      const client = CLIENTS[name](shared.cluster.nodes);
      client.on('error', () => undefined);
      await client.ping(); // the slot map is known
      const entry: (typeof opened)[number] = { client };
      opened.push(entry);
      // One hash tag: every channel is served by one master, on one connection.
      const tag = `hs-${name.replace(' ', '')}-${sharded}`;
      const channels = Array.from({ length: 20 }, (_, i) => `lock:{${tag}}:${i}:released`);
      const subscribed = async () => {
        const counts = await Promise.all(
          masters().map((node) => node.call('PUBSUB', sharded ? 'SHARDNUMSUB' : 'NUMSUB', ...channels) as Promise<(string | number)[]>),
        );
        return channels.filter((_, i) => counts.some((reply) => Number(reply[2 * i + 1]) > 0));
      };
      entry.subscriber = driverFor(client as unknown as RedisClient).subscriber(() => undefined);
      // A plain subscriber is a duplicate of the client: let it read the slot map first, so that
      // the channels below go to its subscriber connection, not to its queue (a duplicate not
      // ready yet makes this test provoke less, not fail).
      await sleep(300);
      // No master runs a command for 300 ms: a connection opened now is accepted, its handshake waits.
      await Promise.all(masters().map((node) => node.call('CLIENT', 'PAUSE', '300', 'ALL')));
      // The first channel opens the connection (its command waits for the handshake) ...
      const first = entry.subscriber.subscribe(channels[0]!, sharded);
      await sleep(50); // connected, handshake unanswered
      // ... the others are asked for while it is unanswered.
      const results = await Promise.allSettled([first, ...channels.slice(1).map((channel) => entry.subscriber!.subscribe(channel, sharded))]);
      expect(results.filter(({ status }) => status === 'rejected')).toEqual([]);
      // Every (S)SUBSCRIBE resolved: each channel is subscribed on the server (now, and for good).
      await expect.poll(subscribed, { timeout: 5_000 }).toEqual(channels);
      await sleep(500);
      expect(await subscribed()).toEqual(channels);
    });

    // A master that gives a slot away ends the sharded subscriptions of its channels (it sends
    // SUNSUBSCRIBE). The subscriber must make them again on the new owner: the channel still
    // counts as live for the waiters of its key, who would otherwise be woken by nothing but
    // their polls for as long as the key stays in use. What tells the client that the slot moved
    // is a MOVED reply to a command on it (a waiter's poll); no periodic refresh of the slot map.
    it.runIf(sharded)('subscribes a channel again on the master its slot moved to', { timeout: 30_000 }, async () => {
      const client = CLIENTS[name](shared.cluster.nodes);
      client.on('error', () => undefined);
      await client.ping();
      const heard: string[] = [];
      const entry: (typeof opened)[number] = { client };
      opened.push(entry);
      entry.subscriber = driverFor(client as unknown as RedisClient).subscriber((channel, message) => heard.push(`${channel} ${message}`));
      const channel = `lock:{moving-${name.replace(' ', '')}}:released`;
      await entry.subscriber.subscribe(channel, true);
      const slot = clusterSlot(channel);
      const owner = () => shared.admin.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === shared.admin.slots[slot]![0])!;
      const source = owner();
      await expect.poll(() => shardSubscribers(source, channel), { timeout: 5_000 }).toBe(1);
      const target = masters().find((node) => node !== source)!;
      const ids = await Promise.all([source, target].map(async (node) => String(await node.cluster('MYID'))));
      await target.cluster('SETSLOT', slot, 'IMPORTING', ids[0]!);
      await source.cluster('SETSLOT', slot, 'MIGRATING', ids[1]!);
      for (const node of [target, source]) await node.cluster('SETSLOT', slot, 'NODE', ids[1]!);
      // The old owner ended the subscription.
      await expect.poll(() => shardSubscribers(source, channel), { timeout: 5_000 }).toBe(0);
      // A command of the client's on that slot (a waiter's poll) is answered MOVED.
      await (client as Cluster).get(`lock:{moving-${name.replace(' ', '')}}`);
      await expect.poll(() => shardSubscribers(target, channel), { timeout: 10_000 }).toBe(1);
      await target.call('SPUBLISH', channel, 'after the move');
      await expect.poll(() => heard, { timeout: 5_000 }).toContain(`${channel} after the move`);
    });
  },
);
