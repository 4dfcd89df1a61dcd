import { Cluster } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { RedisLockError } from '../../lib/index.js';
import { slotMasters, useRedisCluster } from '../support/redis-cluster.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { nodeRedisCluster } from '../support/node-redis.js';

type Nodes = { host: string; port: number }[];

/**
 * Each client, and how its release of a lock whose slot is migrating rejects: ioredis asks again
 * itself (TRYAGAIN after 100 ms) until its `maxRedirections`, then names the last reply after "Too
 * many Cluster redirections. Last error: ReplyError: "; node-redis gives the first TRYAGAIN back.
 */
const CLIENTS: Record<string, { open(nodes: Nodes): Promise<{ client: unknown; close: () => unknown }>; said: RegExp }> = {
  'ioredis 5': {
    open: async (nodes) => {
      const client = new Cluster(nodes);
      client.on('error', () => undefined);
      return { client, close: () => client.disconnect() };
    },
    // It said "was not answered (Too many Cluster redirections. Last error: ReplyError: TRYAGAIN ...)".
    said: /^The release of lock "[^"]+": Redis refused it for now \(Too many Cluster redirections\. Last error: ReplyError: (?:TRYAGAIN|ASK|MOVED) [^)]*\); its lease ends on its own in Redis\.$/,
  },
  'node-redis 6': {
    open: async (nodes) => {
      const client = await nodeRedisCluster(nodes, 6);
      return { client, close: () => client.close() };
    },
    said: /^The release of lock "[^"]+": Redis refused it for now \(TRYAGAIN [^)]*\); its lease ends on its own in Redis\.$/,
  },
};

/**
 * Found by review of e9edc176 and 1f89b95f: a release Redis refused in a way that passes says so
 * ("Redis refused it for now", the refusal quoted), not that it "was not answered", which sends an
 * operator after a network cut or a frozen server. A release whose keys a slot migration split
 * (TRYAGAIN, the slot MIGRATING on the lock's master: it holds the lock but not its queue) was
 * answered every time; through ioredis, which asks again until its `maxRedirections`, the error
 * names the last refusal after "Too many Cluster redirections", and it read "was not answered"
 * there, where node-redis' TRYAGAIN, and a waiting call's LockNotAcquiredError on ioredis, say refused.
 */
describe('Redis Cluster: a release refused while the lock\'s slot is migrating (TRYAGAIN)', () => {
  const own = useRedisCluster();

  it.each(Object.keys(CLIENTS))('%s: rejects saying Redis refused it for now, the refusal quoted', { timeout: 60_000 }, async (name) => {
    const { cluster, admin } = own;
    const handed = await CLIENTS[name]!.open(cluster.nodes);
    onTestFinished(async () => void (await handed.close()));
    const app = await createLockApp({ redis: handed.client as never, ttl: 20_000 });
    onTestFinished(() => app.close());
    const key = `migrating:release-said:${name.replace(/\W/g, '')}`;
    const redisKey = `lock:{${key}}`;
    const slot = clusterSlot(redisKey);
    const { source, target, src, dst } = await slotMasters(admin, slot);
    let migrating = false;
    // Stable again before the app closes (its close sends the unconfirmed release again).
    onTestFinished(async () => {
      if (migrating) for (const node of [src, dst]) await node.cluster('SETSLOT', slot, 'STABLE');
      await sleep(0);
      src.disconnect();
      dst.disconnect();
    });
    await (await app.locks.acquire('migrating:release-said:warm')).release(); // scripts cached
    const held = await app.locks.acquire(key);
    await dst.cluster('SETSLOT', slot, 'IMPORTING', source.id);
    await src.cluster('SETSLOT', slot, 'MIGRATING', target.id);
    migrating = true;
    const failed = await held.release().then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failed).toBeInstanceOf(RedisLockError);
    expect(failed!.message).toMatch(CLIENTS[name]!.said);
  });
});
