/**
 * Found by review. A node-redis Cluster (5 and 6) or Sentinel (6) client handed in: the library
 * subscribes to release channels on a `duplicate()` of it, a connection of its own. Redis drops
 * that pub/sub connection alone and refuses new ones (`maxclients` reached); node-redis retries
 * it with the client's reconnect strategy and waits between attempts on `await
 * setTimeout(retryIn)` from `timers/promises` (@redis/client's RedisSocket#connect), a timer
 * that neither the library's `destroy()` of the duplicate nor the application's `destroy()` of
 * its own client clears: the process lived on after `app.close()` until the attempt was due (up
 * to 2.2 s with node-redis' default strategy, the strategy's delay with the application's own,
 * 5 s here). The plain client's duplicate was already reconnected by the library
 * (close-with-node-redis-subscriber-reconnecting-exits.spec.ts); the Cluster's and Sentinel's
 * duplicates now are too: node-redis gives their connections up (`reconnectStrategy: false`) and
 * the library makes the duplicate again, on a timer its close clears. Half a second after the
 * close, nothing but the standard streams may keep the event loop alive. The duplicate made again
 * is subscribed to the channels still wanted: a release message after the drop wakes the waiter
 * (checked in-process, on the same servers).
 */
import { Redis } from 'ioredis';
import { createSentinel } from 'redis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { spawnFixture } from '../support/fixture-process.js';
import { countAttempts, releaseBetweenPolls } from '../support/mechanism.js';
import { nodeRedisCluster, nodeRedisLockApp, type TestClient } from '../support/node-redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';

const FIXTURE = new URL('./fixtures/close-node-redis-subscriber-reconnecting.mjs', import.meta.url);

/**
 * Runs the fixture on `env`, then on the node at `port` refuses new connections and drops the
 * library's pub/sub connection there (the one `CLIENT LIST TYPE pubsub` shows that `ours`
 * accepts), and checks what the process keeps alive after the close.
 */
async function closesWithSubscriberDropped(env: Record<string, string>, port: () => Promise<number>, ours: (line: string) => boolean): Promise<void> {
  // A run before this one (a retry's first attempt), killed, left its lock held for its ttl.
  const before = new Redis(await port(), '127.0.0.1');
  await before.del('lock:{held}').finally(() => before.disconnect());
  // The application's strategy: try again every 5 s.
  const child = spawnFixture(FIXTURE, { ...env, RECONNECT_MS: '5000' });
  // However long its start takes (over 15 s on a loaded machine: Node, Nest and the drivers to load).
  await child.line(/^ready$/);
  const admin = new Redis(await port(), '127.0.0.1');
  try {
    // The fixture's waiter subscribes on its way to waiting: on a loaded machine, after `ready`.
    await expect.poll(async () => (await subscriberOn(await port(), ours)).filter((line) => /\b(s?sub)=1\b/.test(line)).length, { timeout: 10_000 }).toBe(1);
    const subscribers = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
      .split('\n')
      .filter((line) => line !== '' && ours(line));
    expect(subscribers).toHaveLength(1);
    // The connections made stay; new ones are refused.
    await admin.config('SET', 'maxclients', '1');
    onTestFinished(async () => {
      await admin.config('SET', 'maxclients', '10000').catch(() => undefined);
      admin.disconnect();
    });
    expect(Number(await admin.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec(subscribers[0]!)![1]!))).toBe(1);
  } catch (error) {
    admin.disconnect();
    throw error;
  }
  child.endWith('go');
  const [, closed] = await child.line(/^closed (\[.*\])$/);
  // Only the library's connection was reconnecting.
  expect(child.output()).toContain('handed ready true');
  const left = JSON.parse(closed!) as string[];
  expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
  await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
}

/** The library's pub/sub connection on the node at `port` (`ours` picks it), its `CLIENT LIST` line. */
async function subscriberOn(port: number, ours: (line: string) => boolean): Promise<string[]> {
  const node = new Redis(port, '127.0.0.1');
  try {
    return String(await node.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
      .split('\n')
      .filter((line) => line !== '' && ours(line));
  } finally {
    node.disconnect();
  }
}

/**
 * Two apps on clients of `open()`: a waiter of the waiting app, subscribed on the node at
 * `port`, has its subscriber connection dropped; once subscribed again there, the holder's
 * release wakes it without another attempt.
 */
async function releaseWakesAfterDrop(open: () => Promise<TestClient>, port: () => Promise<number>, ours: (line: string) => boolean): Promise<void> {
  const before = new Redis(await port(), '127.0.0.1');
  await before.del('lock:{held}').finally(() => before.disconnect());
  const holder = await nodeRedisLockApp([await open()], { ttl: 20_000 });
  const waiter = await nodeRedisLockApp([await open()]);
  try {
    const held = await holder.locks.acquire('held');
    const attempts = countAttempts(waiter.locks);
    const waiting = waiter.locks.acquire('held', { waitTimeout: 15_000 });
    const subscribed = async () => (await subscriberOn(await port(), ours)).filter((line) => /\b(s?sub)=1\b/.test(line));
    await expect.poll(async () => (await subscribed()).length).toBe(1);
    const dropped = /\bid=(\d+)/.exec((await subscribed())[0]!)![1]!;
    const node = new Redis(await port(), '127.0.0.1');
    try {
      expect(Number(await node.call('CLIENT', 'KILL', 'ID', dropped))).toBe(1);
    } finally {
      node.disconnect();
    }
    // Made again: another connection, subscribed.
    await expect.poll(async () => (await subscribed()).map((line) => /\bid=(\d+)/.exec(line)![1]).filter((id) => id !== dropped).length).toBe(1);
    const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
    expect(attemptsSinceRelease).toBe(0);
    await next.release();
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
  }
}

describe('app.close() with the node-redis Cluster subscriber waiting to reconnect', () => {
  const redis = useRedisCluster();

  for (const version of ['6', '5'] as const) {
    it(`lets the process exit on its own, node-redis ${version}`, { timeout: 60_000 }, async () => {
      // The master of the release channel of the fixture's lock, `held`.
      const masterPort = async () => Number(redis.admin.slots[clusterSlot('lock:{held}')]![0]!.split(':')[1]);
      await closesWithSubscriberDropped({ TOPOLOGY: 'cluster', CLUSTER_NODES: JSON.stringify(redis.cluster.nodes), NODE_REDIS: version }, masterPort, () => true);
    });

    it(`makes a dropped subscriber again, subscribed: the release wakes the waiter, node-redis ${version}`, { timeout: 60_000 }, async () => {
      const masterPort = async () => Number(redis.admin.slots[clusterSlot('lock:{held}')]![0]!.split(':')[1]);
      await releaseWakesAfterDrop(() => nodeRedisCluster(redis.cluster.nodes, Number(version) as 5 | 6), masterPort, () => true);
    });
  }
});

describe('app.close() with the node-redis Sentinel subscriber waiting to reconnect', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  it('lets the process exit on its own, node-redis 6', { timeout: 60_000 }, async () => {
    const env = { TOPOLOGY: 'sentinel', SENTINELS: JSON.stringify(deployment.sentinels), SENTINEL_NAME: deployment.name, NODE_REDIS: '6' };
    // Not the sentinels' own pub/sub connections to the master.
    await closesWithSubscriberDropped(env, () => deployment.masterPortNow(), (line) => !/\bname=sentinel-/.test(line));
  });

  it('makes a dropped subscriber again, subscribed: the release wakes the waiter, node-redis 6', { timeout: 60_000 }, async () => {
    const open = async () => {
      const client = createSentinel({ name: deployment.name, sentinelRootNodes: deployment.sentinels }) as unknown as TestClient;
      client.on('error', () => undefined);
      await client.connect();
      return client;
    };
    await releaseWakesAfterDrop(open, () => deployment.masterPortNow(), (line) => !/\bname=sentinel-/.test(line));
  });
});
