import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { LockService } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { sleep } from '../support/lock-app.js';
import { countAttempts, releaseBetweenPolls } from '../support/mechanism.js';
import { nodeRedisCluster, nodeRedisLockApp, type NodeRedisVersion } from '../support/node-redis.js';
import { shardSubscribers, subscribers } from '../support/redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';
import { terminusLockModule } from '../support/terminus-app.js';

describe.each([6, 5] as NodeRedisVersion[])('Redis 7 Cluster through a node-redis %i cluster client', (version) => {
  const redisCluster = useRedisCluster();

  /** The master that serves a key, as ioredis knows it. */
  const masterOf = (key: string) => {
    const address = redisCluster.admin.slots[clusterSlot(key)]![0]!;
    return redisCluster.admin.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === address)!;
  };

  it('wakes a waiter with a sharded release message, carried by the shard that owns the lock', async () => {
    const holder = await nodeRedisLockApp([await nodeRedisCluster(redisCluster.cluster.nodes, version)], { ttl: 20_000 });
    const waiter = await nodeRedisLockApp([await nodeRedisCluster(redisCluster.cluster.nodes, version)]);
    try {
      const held = await holder.locks.acquire('sharded');
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire('sharded', { waitTimeout: 15_000 });
      const owner = masterOf('lock:{sharded}');
      await expect.poll(() => shardSubscribers(owner, 'lock:{sharded}:released'), { timeout: 5_000 }).toBe(1);
      // Not a plain subscription, which every node would have to carry.
      for (const node of redisCluster.admin.nodes('master')) expect(await subscribers(node, 'lock:{sharded}:released')).toBe(0);
      const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      // Woken by the shard message: a poll would have made an attempt.
      expect(attemptsSinceRelease).toBe(0);
      expect(next.fencingToken).toBe(held.fencingToken + 1);
      await next.release();
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  it('renews a batch in one call per master, with an outcome for every lock', async () => {
    const client = await nodeRedisCluster(redisCluster.cluster.nodes, version);
    try {
      const scripts = new LockScripts(client as never);
      expect(await scripts.perMasterRenewals()).toBe(true); // learns that every master runs Redis 7
      const requests = Array.from({ length: 60 }, (_, i) => ({ lockKey: `lock:{batch:${i}}`, token: `t${i}`, ttl: 60_000 }));
      for (const { lockKey, token } of requests.slice(0, 50)) await redisCluster.admin.set(lockKey, token, 'PX', 10_000);
      await redisCluster.admin.set('lock:{batch:50}', 'someone else', 'PX', 10_000);
      const parts = scripts.renewBatch(requests);
      expect(parts).toHaveLength(3);
      const outcomes: unknown[] = new Array(requests.length);
      for (const part of parts) (await part.outcomes).forEach((outcome, i) => (outcomes[part.indexes[i]!] = outcome));
      expect(outcomes.slice(0, 50).every((outcome) => outcome === true)).toBe(true);
      expect(outcomes.slice(50).every((outcome) => outcome === false)).toBe(true);
      expect(await redisCluster.admin.pttl('lock:{batch:7}')).toBeGreaterThan(30_000);
      expect(await redisCluster.admin.get('lock:{batch:50}')).toBe('someone else');
    } finally {
      await client.close();
    }
  });

  it('pages through the locks of every master, and answers inspect() and the terminus indicator', async () => {
    const client = await nodeRedisCluster(redisCluster.cluster.nodes, version);
    const moduleRef = await terminusLockModule(client, { keyPrefix: 'board:' });
    try {
      const locks = moduleRef.get(LockService);
      const keys = Array.from({ length: 20 }, (_, i) => `spread:${i}`);
      const held = await Promise.all(keys.map((key) => locks.acquire(key, { label: `job ${key}` })));
      const manager = locks[LOCK_RUNNER] as LockManager;
      const seen: string[] = [];
      let cursor = '0';
      let pages = 0;
      do {
        const page = await listLocks(manager, cursor, 5);
        for (const lock of page.locks) {
          expect(lock.holder?.label).toBe(`job ${lock.key}`);
          seen.push(lock.key);
        }
        cursor = page.cursor;
      } while (cursor !== '0' && ++pages < 200);
      expect([...new Set(seen)].sort()).toEqual([...keys].sort());
      expect(await locks.inspect('spread:3')).toMatchObject({ held: true, fencingToken: held[3]!.fencingToken, waiters: 0 });
      const health = await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks');
      expect(health.locks.status).toBe('up');
      await Promise.all(held.map((lock) => lock.release()));
    } finally {
      await moduleRef.close();
      expect(client.isOpen).toBe(true);
      await client.close();
    }
  });

  it('keeps a lock whose slot stays half-migrated (ASK) for longer than its ttl', { timeout: 30_000 }, async () => {
    const ttl = 2_000;
    const app = await nodeRedisLockApp([await nodeRedisCluster(redisCluster.cluster.nodes, version)], { ttl, renewInterval: 400 });
    const connect = (address: string) => new Redis(Number(address.split(':')[1]), address.split(':')[0]!);
    let restore = async (): Promise<void> => undefined;
    try {
      const locks = await Promise.all(Array.from({ length: 60 }, (_, i) => app.locks.acquire(`ask:${version}:${i}`)));
      await redisCluster.admin.cluster('SLOTS'); // the map as it is now
      const nodes = String(await redisCluster.admin.cluster('NODES'))
        .split('\n')
        .filter((line) => line.includes('master') && !line.includes('fail'))
        .map((line) => ({ id: line.split(' ')[0]!, address: line.split(' ')[1]!.split('@')[0]! }));
      // Not the first lock of its master's batch: the others come as arguments, not declared keys.
      const lock = locks[locks.length - 1]!;
      const key = `lock:{${lock.key}}`;
      const slot = clusterSlot(key);
      const source = nodes.find((node) => node.address === redisCluster.admin.slots[slot]![0])!;
      const target = nodes.find((node) => node.id !== source.id)!;
      const [src, dst] = [connect(source.address), connect(target.address)];
      const [host, port] = target.address.split(':') as [string, string];
      restore = async () => {
        const left = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
        if (left.length > 0) await src.migrate(host, port, '', 0, 5_000, 'KEYS', ...left);
        for (const node of [dst, src]) await node.cluster('SETSLOT', slot, 'NODE', target.id);
        src.disconnect();
        dst.disconnect();
      };
      await dst.cluster('SETSLOT', slot, 'IMPORTING', source.id);
      await src.cluster('SETSLOT', slot, 'MIGRATING', target.id);
      await src.migrate(host, port, key, 0, 5_000); // the lock alone: its fencing counter stays behind
      await sleep(2 * ttl);
      expect(locks.filter((held) => !held.held).map((held) => `${held.key}: ${held.signal.reason?.message}`)).toEqual([]);
      await dst.call('ASKING'); // the target serves an importing slot only to a client that asks
      expect(await dst.pttl(key)).toBeGreaterThan(ttl / 2);
    } finally {
      // Released at close: the migrated lock's release (all its keys declared) gets TRYAGAIN
      // until the slot is settled, like any multi-key command.
      await restore();
      await app.close();
    }
  });
});
