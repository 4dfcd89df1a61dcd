import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys, type SemaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import type { SemaphoreStore } from '../../lib/core/semaphore/semaphore-store.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import type { RenewalOutcome } from '../../lib/core/stores/lock-store.js';
import { systemClock } from '../../lib/core/time/clock.js';
import { sleep } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/** The semaphore protocol one script call at a time, on a real Redis server and in memory. */
interface Store {
  semaphores: SemaphoreStore;
  renew(lockKey: string, token: string, ttl: number): Promise<RenewalOutcome>;
}

const LIMIT = 2;
const TTL = 60_000;
/** Waiters' liveness lease and the grant lease: long enough for the waiters to outlive the crashed holders. */
const WAITER_LEASE = 1_000;
const HOLDER_TTL = 300;

describe.each([
  ['one Redis', 'redis'],
  ['a 3-master Redis Cluster', 'cluster'],
  ['in memory', 'memory'],
] as const)('semaphore scripts: %s', (_label, kind) => {
  let cluster: RedisCluster | undefined;
  let client: Redis | Cluster | undefined;
  let store: Store;
  let run = 0;

  beforeAll(async () => {
    if (kind === 'redis') {
      client = new Redis(redisUrl());
      store = new LockScripts(client);
    } else if (kind === 'cluster') {
      cluster = await startRedisCluster(3);
      client = new Cluster(cluster.nodes);
      store = new LockScripts(client);
    } else {
      store = new MemoryStore(new MemoryData(), systemClock, () => undefined);
    }
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  const semaphore = (): ((token: string) => SemaphoreKeys) => {
    const key = `sem-scripts:${process.pid}:${++run}`;
    const base = lockRedisKeys('lock:', key);
    return (token) => semaphoreKeys(base, token, key, LIMIT, 1);
  };
  const acquire = (keys: (token: string) => SemaphoreKeys, token: string, ttl = TTL) => store.semaphores.acquire(keys(token), token, ttl, true, WAITER_LEASE);

  it('keeps the limit while a renewed holder outlives its first lease', async () => {
    const keys = semaphore();
    expect(await acquire(keys, 'h1', HOLDER_TTL)).toMatchObject({ acquired: true });
    // Renewed to a longer lease before the first one ran out, then past that first lease.
    expect(await store.renew(keys('h1').lock, 'h1', 10 * HOLDER_TTL)).toBe(true);
    await sleep(HOLDER_TTL + 100);
    const key = keys('x').semaphore.key;
    const other = semaphoreKeys(lockRedisKeys('lock:', key), 'x', key, LIMIT + 1, 1);
    expect(await store.semaphores.acquire(other, 'x', TTL, false, WAITER_LEASE)).toMatchObject({ acquired: false, limitInUse: LIMIT });
    await store.semaphores.release(keys('h1'), 'h1', WAITER_LEASE);
  });

  it('answers "acquired" to a queued caller that its own refresh grants a permit to, and never lets a third holder in', async () => {
    const keys = semaphore();
    // Two holders that crash (never renew, never release): the semaphore is full until their permits expire.
    expect(await acquire(keys, 'h1', HOLDER_TTL)).toMatchObject({ acquired: true });
    expect(await acquire(keys, 'h2', HOLDER_TTL)).toMatchObject({ acquired: true });
    expect(await acquire(keys, 'a')).toMatchObject({ acquired: false });
    expect(await acquire(keys, 'c')).toMatchObject({ acquired: false });
    await sleep(HOLDER_TTL + 100);
    // C is not at the head, but both permits are free: its refresh grants A (the head) and then C
    // itself. That grant must end this very call as "acquired", with C out of the queue.
    const c = await acquire(keys, 'c');
    expect.soft(c).toMatchObject({ acquired: true });
    // Either way C now believes it holds a permit (a "wait" reply is followed by the grant's
    // message, which the engine takes and renews), and so does A.
    const holders = new Set(['a', 'c']);
    if (!c.acquired) expect(await store.renew(keys('c').lock, 'c', TTL)).toBe(true);
    expect(await store.renew(keys('a').lock, 'a', TTL)).toBe(true);
    // A gives its permit back: nobody is left in the queue to get it (C must not be re-queued).
    holders.delete('a');
    const released = await store.semaphores.release(keys('a'), 'a', WAITER_LEASE);
    expect.soft(released).toMatchObject({ released: true, grants: [] });
    // C, which renews every ttl/3, holds one permit: of D and E, one gets the other, also once
    // a grant lease has passed.
    for (const token of ['d', 'e']) if ((await acquire(keys, token)).acquired) holders.add(token);
    await sleep(WAITER_LEASE + 100);
    for (const token of ['d', 'e']) if (!holders.has(token) && (await acquire(keys, token)).acquired) holders.add(token);
    expect([...holders].sort()).toEqual(['c', 'd']);
    expect(await store.renew(keys('c').lock, 'c', TTL)).toBe(true);
    await store.semaphores.leave(keys('e'), 'e', TTL, WAITER_LEASE);
    for (const token of ['c', 'd']) await store.semaphores.release(keys(token), token, WAITER_LEASE);
  });
});
