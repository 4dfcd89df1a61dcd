/**
 * Found by review (thirty-ninth session): a node-redis Cluster client (node-redis 6) whose node
 * connections have `reconnectStrategy: false` (in `defaults.socket`, as a Sentinel client's in
 * `nodeClientOptions.socket`; a plain client's in `socket` alike). The library subscribes to release messages on a duplicate of it
 * with the application's strategy, and when the duplicate's connection dropped (a network blip, a
 * proxy's idle timeout, `CLIENT KILL` here) the strategy gave it up: the process' waiters heard no
 * release message any more and found a freed lock only by polling, every 250 ms, until a wait on
 * another lock opened the connection again; with nothing in the log. The library now logs an
 * error saying so, naming the option and what to do (docs/configuration.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NODE_REDIS, nodeRedisLockApp, type TestClient } from '../support/node-redis.js';
import type { LockApp } from '../support/lock-app.js';
import { useRedisCluster } from '../support/redis-cluster.js';
import { useOwnRedis } from '../support/redis.js';
import { killSubscriberOfWaiter, loggedErrors } from '../support/given-up-subscriber.js';

const STOPPED = /^Release messages stopped: the connection this process hears lock releases on dropped, and the Redis client's reconnect strategy \(socket\.reconnectStrategy\) gave it up \(.*\)\. Waiters find a freed lock only by polling/;

describe('a node-redis Cluster client with reconnectStrategy: false', () => {
  const own = useRedisCluster();
  const apps: LockApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('logs an error when the connection its waiters hear releases on is dropped and given up', { timeout: 30_000 }, async () => {
    const { cluster, admin } = own;
    const client = NODE_REDIS[6].createCluster({
      rootNodes: cluster.nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      defaults: { socket: { reconnectStrategy: false } },
    }) as TestClient;
    client.on('error', () => undefined);
    await client.connect();
    const waiter = await nodeRedisLockApp([client]);
    apps.push(waiter);
    // Held by someone else.
    expect(await admin.set('lock:{given-up}', 'someone', 'PX', 20_000)).toBe('OK');
    const waiting = waiter.locks.acquire('given-up', { waitTimeout: '20s' });
    waiting.catch(() => undefined);
    // The library's pub/sub connection, subscribed to the lock's channel on the master of its slot.
    const masters = admin.nodes('master');
    const subscribed = async (): Promise<{ node: (typeof masters)[number]; id: string } | undefined> => {
      for (const node of masters) {
        const line = String(await node.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n').find((entry) => /\bssub=1\b/.test(entry));
        if (line !== undefined) return { node, id: /\bid=(\d+)/.exec(line)![1]! };
      }
      return undefined;
    };
    await expect.poll(subscribed, { timeout: 10_000 }).toBeDefined();
    const { node, id } = (await subscribed())!;
    expect(Number(await node.call('CLIENT', 'KILL', 'ID', id))).toBe(1);
    await expect.poll(() => loggedErrors(waiter), { timeout: 10_000 }).toEqual([expect.stringMatching(STOPPED)]);
    // Still served, by polling.
    await admin.del('lock:{given-up}');
    await (await waiting).release();
  });

  describe('a plain client', () => {
    const server = useOwnRedis();
    it('logs it too', async () => {
      const client = NODE_REDIS[6].createClient({ url: server.url(), socket: { reconnectStrategy: false } }) as TestClient;
      client.on('error', () => undefined);
      await client.connect();
      const waiter = await nodeRedisLockApp([client]);
      apps.push(waiter);
      await killSubscriberOfWaiter(waiter, server.redis(), STOPPED);
    });
  });
});
