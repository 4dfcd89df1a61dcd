/**
 * Review suspicion (forty-eighth session): since a renewal that finds a semaphore holder's permit
 * gone hands the permits that freed to the waiters (680c2b46), a renew batch, which must run under
 * a full `maxmemory`, may write a grant there (`SET` of a permit, `HSET`, `INCR` of the fence),
 * past the limit, where an acquire would have been refused.
 *
 * What Redis does: it refuses, under a full `maxmemory`, only a script's first write that may add
 * memory (unflagged scripts, as the renew scripts off a Cluster are; a Cluster's per-master batch
 * is flagged `allow-oom`, and hands nothing on itself). Once a script has written anything, the
 * rest runs. A release starts with `DEL` and so hands its permits on under a full `maxmemory`
 * (below): the grant takes about the memory the lost permit freed, and the waiter it goes to is
 * owed it. A renewal's hand-on there does the same, and need not be refused.
 *
 * But whether it ran depended on where the permit stood: in a batch after a renewed lock (its
 * `PEXPIRE` is a write) the renewal dropped the holder's entry and handed its permits on; alone,
 * or first, its first write (`HSET` of `:used`) was refused, and so was the `ZADD` that was to make
 * the holder due instead: the entry stayed, its permits counted until its old deadline (up to a
 * ttl), and the waiters waited that long (confirmed; failing test first). The drop now starts with
 * the `HDEL` of the entry, which adds no memory, and runs wherever the permit stands.
 */
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/** Leases and waiter leases that do not run out during the test. */
const LONG = 600_000;

describe.each([
  ['one Redis', 'redis'],
  ['a 3-master Redis Cluster', 'cluster'],
] as const)('a renewal that finds a semaphore permit gone under a full maxmemory, %s', (_label, kind) => {
  let server: RedisServer | undefined;
  let cluster: RedisCluster | undefined;
  let client: Redis | Cluster;
  let store: LockScripts;
  beforeAll(async () => {
    if (kind === 'cluster') cluster = await startRedisCluster(3);
    else server = await startRedisServer();
    client = cluster !== undefined ? new Cluster(cluster.nodes) : new Redis(server!.url);
    store = new LockScripts(client);
    if (kind === 'cluster') await store.perMasterRenewals();
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
    await server?.stop();
  });

  const masters = () => (client instanceof Cluster ? client.nodes('master') : [client]);

  /** Runs `fn` with every master's memory full: a write that adds memory, first in its call, is refused. */
  async function underFullMemory(fn: () => Promise<void>): Promise<void> {
    await Promise.all(masters().map((node) => node.config('SET', 'maxmemory', '1')));
    try {
      await expect(client.set('oom:probe', 'x')).rejects.toThrow(/OOM/);
      await fn();
    } finally {
      await Promise.all(masters().map((node) => node.config('SET', 'maxmemory', '0')));
    }
  }

  /** h and b hold both permits of `key`, w waits for one; b's permit is deleted (an eviction). */
  async function bLost(key: string) {
    const keys = (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 2, 1);
    const { semaphores } = store;
    expect(await semaphores.acquire(keys('h'), 'h', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('b'), 'b', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    expect(await client.del(keys('b').lock)).toBe(1);
    return keys;
  }

  async function cleanUp(keys: (token: string) => ReturnType<typeof semaphoreKeys>, tokens: string[]) {
    for (const token of tokens) await store.semaphores.release(keys(token), token, LONG);
    const names = [keys('h').queue, keys('h').waiters, keys('h').semaphore.holders, keys('h').semaphore.due];
    expect(await Promise.all(names.map((name) => client.exists(name)))).toEqual(names.map(() => 0));
  }

  it('drops the holder and hands its permit on when it is renewed alone', async () => {
    const keys = await bLost(`oom-alone-${kind}-${process.pid}-${Date.now()}`);
    await underFullMemory(async () => {
      expect(await store.renew(keys('b').lock, 'b', LONG)).toBe(false);
      // b's entry went, and w, the head, got its permit before making any call.
      await expect.poll(() => client.exists(keys('w').lock), { timeout: 5_000 }).toBe(1);
      expect(await client.hget(keys('h').semaphore.holders, 'b')).toBeNull();
    });
    expect(await store.semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    await cleanUp(keys, ['h', 'w']);
  });

  it('does the same in a batch where another lock is renewed first', async () => {
    const key = `oom-batch-${kind}-${process.pid}-${Date.now()}`;
    const keys = await bLost(key);
    // A mutex in the semaphore's slot (its key's own name), renewed before the permit.
    const mutex = lockRedisKeys('lock:', key);
    expect(await store.acquire(mutex, 'm', LONG, false, LONG)).toMatchObject({ acquired: true });
    await underFullMemory(async () => {
      const parts = store.renewBatch([
        { lockKey: mutex.lock, token: 'm', ttl: LONG },
        { lockKey: keys('b').lock, token: 'b', ttl: LONG },
      ]);
      const outcomes: unknown[] = [];
      for (const part of parts) (await part.outcomes).forEach((outcome, i) => (outcomes[part.indexes[i]!] = outcome));
      expect(outcomes).toEqual([true, false]);
      await expect.poll(() => client.exists(keys('w').lock), { timeout: 5_000 }).toBe(1);
      expect(await client.hget(keys('h').semaphore.holders, 'b')).toBeNull();
    });
    expect(await store.semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    await store.release(mutex, 'm', LONG);
    await cleanUp(keys, ['h', 'w']);
  });

  it('as a release hands its permit on under a full maxmemory, where a newcomer is refused', async () => {
    const key = `oom-release-${kind}-${process.pid}-${Date.now()}`;
    const keys = (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 1, 1);
    const { semaphores } = store;
    expect(await semaphores.acquire(keys('h'), 'h', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    const other = (token: string) => semaphoreKeys(lockRedisKeys('lock:', `${key}-other`), token, `${key}-other`, 1, 1);
    await underFullMemory(async () => {
      // A caller of a free semaphore writes its permit first: refused.
      await expect(semaphores.acquire(other('n'), 'n', LONG, true, LONG)).rejects.toThrow(/OOM/);
      // h's release deletes its permit first, then grants w.
      expect((await semaphores.release(keys('h'), 'h', LONG)).grants.map((grant) => grant.token)).toEqual(['w']);
    });
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    await cleanUp(keys, ['w']);
  });
});
