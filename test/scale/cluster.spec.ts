import { Cluster } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { useRedisCluster } from '../support/redis-cluster.js';
import { countAttempts, releaseBetweenPolls } from '../support/mechanism.js';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';

describe('Redis Cluster (3 masters)', () => {
  const redisCluster = useRedisCluster();
  let app: LockApp | undefined;
  // The module never closes a client handed in: closed after each test, once its app is.
  const clients: Cluster[] = [];
  const client = () => {
    const opened = new Cluster(redisCluster.cluster.nodes);
    clients.push(opened);
    return opened;
  };

  afterEach(async () => {
    await app?.close();
    app = undefined;
    for (const opened of clients.splice(0)) opened.disconnect();
  });

  const open = (options: Parameters<typeof createLockApp>[0] = {}) => createLockApp({ redis: client(), ...options }).then((created) => (app = created));

  it('locks keys of any shape without CROSSSLOT errors, spread over all masters', async () => {
    await open();
    const keys = ['order:1', '{tagged}', 'a}b', '}lead', 'x{y}z{w}', 'ünïcødé 🔒', '\\', '{', '}', ...Array.from({ length: 60 }, (_, i) => `spread:${i}`)];
    for (const key of keys) {
      await app!.locks.using(key, async (lock) => {
        expect(lock.held).toBe(true);
        expect(await app!.locks.isLocked(key)).toBe(true);
      });
      expect(await app!.locks.isLocked(key)).toBe(false);
    }
    // The keys landed on every master, so the hash tags were checked by three nodes.
    const perNode = await Promise.all(redisCluster.admin.nodes('master').map((node) => node.dbsize()));
    expect(perNode.every((count) => count > 0)).toBe(true);
  });

  it('wakes a waiter on release through sharded pub/sub, and serves waiters in turn', async () => {
    await open({ ttl: 30_000 });
    const other = await createLockApp({ redis: client(), ttl: 30_000 });
    try {
      const held = await app!.locks.acquire('cluster:handoff');
      const attempts = countAttempts(other.locks);
      const waiting = other.locks.acquire('cluster:handoff', { waitTimeout: 10_000 });
      // Redis 7: the waiter listens on a shard channel, carried only by the lock's own shard
      // (subscribed once the waiter's sharded subscriber connection is up).
      const shardChannels = async () => (await Promise.all(redisCluster.admin.nodes('master').map((node) => node.call('PUBSUB', 'SHARDCHANNELS') as Promise<string[]>))).flat();
      const subscribed = performance.now() + 5_000;
      while ((await shardChannels()).length === 0 && performance.now() < subscribed) await sleep(10);
      expect(await shardChannels()).toEqual(['lock:{cluster:handoff}:released']);
      const plainChannels = await Promise.all(redisCluster.admin.nodes('master').map((node) => node.pubsub('CHANNELS') as Promise<string[]>));
      expect(plainChannels.flat()).toEqual([]);
      const { lock, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      // Woken by the shard message: a poll would have made an attempt.
      expect(attemptsSinceRelease).toBe(0);
      expect(lock.fencingToken).toBe(held.fencingToken + 1);
      await lock.release();
    } finally {
      await other.close();
    }
  });

  it('renews many locks across slots with one call per master per tick, and reports exactly the one stolen', async () => {
    await open({ ttl: 1_200, renewInterval: 300 });
    const locks = await Promise.all(Array.from({ length: 200 }, (_, i) => app!.locks.acquire(`batch:${i}`)));
    const masters = redisCluster.admin.nodes('master');
    const resetAt = performance.now();
    await Promise.all(masters.map((node) => node.config('RESETSTAT')));
    await sleep(700);
    // Redis 7: one script call per master per tick (a loaded machine may run fewer ticks than
    // the time watched allows, never more), not one per slot.
    const calls = await Promise.all(masters.map(async (node) => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await node.info('commandstats'))?.[1] ?? 0)));
    const ticks = Math.ceil((performance.now() - resetAt) / 300) + 1;
    for (const count of calls) {
      expect(count).toBeGreaterThanOrEqual(1);
      expect(count).toBeLessThanOrEqual(ticks);
    }
    await redisCluster.admin.del('lock:{batch:13}');
    await new Promise((resolve) => (locks[13]!.signal.aborted ? resolve(undefined) : locks[13]!.signal.addEventListener('abort', resolve, { once: true })));
    await sleep(1_000);
    expect(locks[13]!.signal.reason).toMatchObject({ reason: 'refused' });
    expect(locks.filter((lock) => lock.held)).toHaveLength(199);
    await Promise.all(locks.map((lock) => lock.release()));
  });

  it('keeps contended read-modify-writes exact', async () => {
    await open();
    let counter = 0;
    await Promise.all(
      Array.from({ length: 30 }, () =>
        app!.locks.using('cluster:counter', async () => {
          const read = counter;
          await sleep(1);
          counter = read + 1;
        }),
      ),
    );
    expect(counter).toBe(30);
  });
});
