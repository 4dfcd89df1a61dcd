import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { readKeys } from '../../lib/core/rwlock/read-keys.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import type { LockStore } from '../../lib/core/stores/lock-store.js';
import type { ReadStore } from '../../lib/core/rwlock/read-store.js';
import type { SemaphoreStore } from '../../lib/core/semaphore/semaphore-store.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { systemClock } from '../../lib/core/time/clock.js';
import { ChaosWorker } from '../chaos/support/chaos-worker.js';
import { sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/** One store as the engine sees it, and the keys it holds now (what `SCAN` finds). */
interface Subject {
  store: LockStore & { semaphores: SemaphoreStore; readers: ReadStore };
  keysOf(lock: string): Promise<string[]>;
  close(): Promise<void>;
}

const TTL = 900;
const WAITER_LEASE = 500;
/** Past every lease of these tests (and the waiters' lease), on any clock. */
const EXPIRED = Math.max(TTL, WAITER_LEASE) + 150;

function redisSubject(fenceRetention: number): Subject {
  const client = new Redis(redisUrl());
  return {
    store: new LockScripts(client, fenceRetention),
    async keysOf(lock) {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${lock.replace(/[[\]*?\\]/g, '\\$&')}*`, 'COUNT', 1000);
        found.push(...keys);
        cursor = next;
      } while (cursor !== '0');
      return found.sort();
    },
    close: async () => void (await client.quit()),
  };
}

let cluster: RedisCluster | undefined;
afterAll(() => cluster?.stop());

/** A 3-master Cluster, started once for the file: renewals of many locks go out as RENEW_NODE. */
async function clusterSubject(fenceRetention: number): Promise<Subject> {
  cluster ??= await startRedisCluster(3);
  const client = new Cluster(cluster.nodes);
  return {
    store: new LockScripts(client, fenceRetention),
    async keysOf(lock) {
      const found: string[] = [];
      for (const node of client.nodes('master')) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', `${lock.replace(/[[\]*?\\]/g, '\\$&')}*`, 'COUNT', 1000);
          found.push(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
      return found.sort();
    },
    close: async () => client.disconnect(),
  };
}

function memorySubject(fenceRetention: number): Subject {
  const data = new MemoryData();
  return {
    store: new MemoryStore(data, systemClock, () => undefined, fenceRetention),
    async keysOf(lock) {
      const now = systemClock.now();
      const maps = [data.locks, data.fences, data.waiting, data.semaphoreHolders, data.semaphoreLimits, data.readers] as Map<string, { expiresAt?: number }>[];
      return maps
        .flatMap((map) => [...map].filter(([key, entry]) => key.startsWith(lock) && (entry.expiresAt ?? Infinity) >= now).map(([key]) => key))
        .sort();
    },
    close: async () => undefined,
  };
}

/** Renews `lockKey` every ttl / 3 until stopped, as a holder's watchdog does (by turns alone and in a batch). */
function renewing(subject: Subject, lockKey: string, token: string): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    for (let tick = 0; !stopped; tick++) {
      const [renewed] = tick % 2 === 0 ? [await subject.store.renew(lockKey, token, TTL)] : await subject.store.renewBatch([{ lockKey, token, ttl: TTL }])[0]!.outcomes;
      expect(renewed).toBe(true);
      await sleep(TTL / 3);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

describe.each([
  ['one Redis', redisSubject],
  ['a 3-master Redis Cluster', clusterSubject],
  ['in memory', memorySubject],
] as const)('keys left by holders that crashed: %s', (_label, open) => {
  let subject: Subject;
  let run = 0;
  beforeAll(async () => {
    subject = await open(0);
  }, 60_000);
  afterAll(() => subject.close());
  const name = (kind: string): string => `leftovers:${process.pid}:${++run}:${kind}`;

  it("a read lock's '~r' value and readers hash expire with its last reader's lease, and renewals keep them", async () => {
    const key = name('read');
    const base = lockRedisKeys('lock:', key);
    const { store } = subject;
    expect(await store.readers.acquire(readKeys(base, 'r1', key), 'r1', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await store.readers.acquire(readKeys(base, 'r2', key), 'r2', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    // r2 crashes; r1 keeps renewing well past the ttl both started with.
    const stop = renewing(subject, readKeys(base, 'r1', key).lock, 'r1');
    await sleep(2 * TTL);
    // The guards outlived r2's lease with r1's: a writer still finds the lock held by a reader.
    expect(await store.acquire(base, 'w', TTL, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await store.exists(base.lock)).toBe(true);
    // Now r1 crashes too (it stops renewing).
    await stop();
    await sleep(EXPIRED);
    expect(await subject.keysOf(base.lock)).toEqual([base.fence]);
  });

  it("a semaphore's holders hash and limit expire with its last permit, and renewals keep them", async () => {
    const key = name('semaphore');
    const base = lockRedisKeys('lock:', key);
    const keys = (token: string) => semaphoreKeys(base, token, key, 2, 1);
    const { semaphores } = subject.store;
    expect(await semaphores.acquire(keys('h1'), 'h1', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('h2'), 'h2', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    // A waiter that crashes too: it stops refreshing its place.
    expect(await semaphores.acquire(keys('w'), 'w', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    const stop = renewing(subject, keys('h1').lock, 'h1');
    await sleep(2 * TTL);
    // h1's entry outlived the ttl it started with: one permit is still taken, so of two callers one gets in.
    expect(await semaphores.acquire(keys('a'), 'a', TTL, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('b'), 'b', TTL, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: true });
    await stop();
    await sleep(EXPIRED);
    expect(await subject.keysOf(base.lock)).toEqual([base.fence]);
  });

  it('with a fenceRetention, nothing at all is left once it has passed', async () => {
    const retained = await open(EXPIRED);
    try {
      const read = name('read');
      const readBase = lockRedisKeys('lock:', read);
      expect(await retained.store.readers.acquire(readKeys(readBase, 'r1', read), 'r1', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
      const sem = name('semaphore');
      const semBase = lockRedisKeys('lock:', sem);
      expect(await retained.store.semaphores.acquire(semaphoreKeys(semBase, 'h1', sem, 1, 1), 'h1', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
      expect(await retained.store.semaphores.acquire(semaphoreKeys(semBase, 'w', sem, 1, 1), 'w', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      await sleep(EXPIRED + 50);
      expect(await retained.keysOf(readBase.lock)).toEqual([]);
      expect(await retained.keysOf(semBase.lock)).toEqual([]);
    } finally {
      await retained.close();
    }
  });
});

describe('keys guarding leases that an earlier version wrote without expiry', () => {
  it('keep none: their holders, which renew without pushing them on, may still need them', async () => {
    const subject = redisSubject(0);
    const client = new Redis(redisUrl());
    try {
      const key = `leftovers:${process.pid}:old`;
      const base = lockRedisKeys('lock:', key);
      // (Semaphores changed their layout since: a holders hash of an earlier version is not read
      // as one, see the CHANGELOG; mixing versions on one semaphore is not supported.)
      const reader = readKeys(base, 'old', key);
      await client.set(reader.read.shared, '~r');
      await client.set(reader.lock, 'old', 'PX', 60_000);
      await client.hset(reader.read.readers, 'old', '2');
      expect(await subject.store.readers.acquire(readKeys(base, 'new', key), 'new', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
      expect(await subject.store.renew(readKeys(base, 'new', key).lock, 'new', TTL)).toBe(true);
      expect(await client.pttl(reader.read.shared)).toBe(-1);
      expect(await client.pttl(reader.read.readers)).toBe(-1);
      await client.del(...(await subject.keysOf(base.lock)));
    } finally {
      await client.quit();
      await subject.close();
    }
  });
});

describe('keys left by holder processes that were killed (needs npm run build)', () => {
  const redis = useRedis();
  const worker = fileURLToPath(new URL('./fixtures/family-worker.mjs', import.meta.url));

  it('are only the fencing counters once their leases have run out', { timeout: 60_000 }, async () => {
    const ttl = 1_000;
    const env = { REDIS_URL: redisUrl(), LIMIT: 2, TTL: ttl, MODE: 'hold' };
    const holders = [
      ChaosWorker.start({ ...env, KEY: 'killed-sem' }, 'sem-0', [], worker),
      ChaosWorker.start({ ...env, KEY: 'killed-sem' }, 'sem-1', [], worker),
      ChaosWorker.start({ ...env, KEY: 'killed-read', READ: 1 }, 'read-0', [], worker),
      ChaosWorker.start({ ...env, KEY: 'killed-read', READ: 1 }, 'read-1', [], worker),
    ];
    await Promise.all(holders.map((h) => h.next('acquired', 30_000)));
    // Held past their first ttl by their watchdogs, then killed.
    await sleep(2 * ttl);
    expect((await redis.keys('lock:{killed-*')).sort()).toEqual(
      expect.arrayContaining(['lock:{killed-read}', 'lock:{killed-read}:readers', 'lock:{killed-sem}:holders']),
    );
    for (const holder of holders) holder.child.kill('SIGKILL');
    await Promise.all(holders.map((h) => h.exited));
    await sleep(ttl + 200);
    expect((await redis.keys('lock:{killed-*')).sort()).toEqual(['lock:{killed-read}:fence', 'lock:{killed-sem}:fence']);
  });
});
