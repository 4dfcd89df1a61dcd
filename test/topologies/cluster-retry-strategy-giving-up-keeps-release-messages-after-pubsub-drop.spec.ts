import { Cluster, Redis } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { countAttempts, releaseBetweenPolls } from '../support/mechanism.js';
import { useRedisCluster } from '../support/redis-cluster.js';

type Nodes = { host: string; port: number }[];

/**
 * Review suspicion (drivers), cleared on a real Cluster. On one Redis, a client handed in whose
 * `retryStrategy` gives up lost the connection its waiters hear releases on for good once that
 * idle pub/sub connection dropped alone (a proxy's or load balancer's idle timeout), until
 * test/topologies/ioredis-retry-strategy-giving-up-loses-release-messages-for-good.spec.ts. A
 * Cluster's release subscriptions are sharded (SSUBSCRIBE, Redis 7), each on a connection to its
 * slot's master that ioredis (`shardedSubscribers`) or the library (iovalkey, see
 * ioredis-shard-subscriber.ts) makes again when it ends, whatever the `clusterRetryStrategy`: the
 * Cluster gives up only when every master is out of reach at once, and the command client with
 * it (the shutdown warning says so). So a dropped pub/sub connection costs no release message,
 * with a `clusterRetryStrategy` that gives up, and nothing is logged. Shown by the release waking
 * the waiter (no poll), after the connection carrying its channel was killed.
 */
describe('a Cluster client handed in whose clusterRetryStrategy gives up', () => {
  const shared = useRedisCluster();
  const clients = {
    ioredis: (nodes: Nodes) => new Cluster(nodes, { clusterRetryStrategy: () => null }),
    iovalkey: (nodes: Nodes) => new ValkeyCluster(nodes, { clusterRetryStrategy: () => null }),
  };

  for (const [label, make] of Object.entries(clients)) {
    it(`wakes its waiters by release message after the connection carrying their channel dropped (${label})`, { timeout: 60_000 }, async () => {
      const client = make(shared.cluster.nodes);
      client.on('error', () => undefined);
      onTestFinished(() => client.disconnect());
      await client.ping();
      const waiter = await createLockApp({ redis: client as Cluster, shutdownTimeout: 600 });
      onTestFinished(() => waiter.close());
      const holderClient = new Cluster(shared.cluster.nodes);
      onTestFinished(() => holderClient.disconnect());
      const holder = await createLockApp({ redis: holderClient as never, shutdownTimeout: 600 });
      onTestFinished(() => holder.close());

      const key = `pubsub-dropped:${label}`;
      const held = await holder.locks.acquire(key, { ttl: 20_000 });
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(key, { waitTimeout: '20s' });
      waiting.catch(() => undefined);
      const [host, port] = shared.admin.slots[Number(await shared.admin.cluster('KEYSLOT', `lock:{${key}}`))]![0]!.split(':');
      const master = new Redis(Number(port), host!);
      onTestFinished(() => master.disconnect());
      const subscribed = async (): Promise<number | undefined> => {
        const entry = String(await master.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n').find((line) => /\bssub=1\b/.test(line));
        return entry === undefined ? undefined : Number(/\bid=(\d+)/.exec(entry)![1]);
      };
      await expect.poll(subscribed, { timeout: 10_000 }).toBeDefined();
      const killed = (await subscribed())!;
      expect(Number(await master.call('CLIENT', 'KILL', 'ID', String(killed)))).toBe(1);
      // Subscribed again, on a connection of its own.
      await expect.poll(async () => (await subscribed()) ?? killed, { timeout: 10_000 }).not.toBe(killed);

      const { lock, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting, 'watching');
      attempts.stop();
      // Woken by the release message: a poll would have made an attempt.
      expect(attemptsSinceRelease).toBe(0);
      await lock.release();
      expect(client.status).toBe('ready');
      // Nothing said the release messages stopped (a first subscription slow to be answered, on a
      // loaded machine, may be warned of: waiters poll meanwhile).
      expect(waiter.logs.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([]);
    });
  }
});
