import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { readKeys } from '../../lib/core/rwlock/read-keys.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { useRedis } from '../support/redis.js';

/**
 * A reader's own key and a semaphore permit are renewed with the keys that keep the others out
 * (the `~r` value and the reader's entry; the holder's entry in the semaphore's hash). Where those
 * are not there, a renewal must not push the own lease on alone: it renews nothing. On a Cluster
 * (a slot half migrated: test/topologies/cluster-half-migrated-slot-*) it answers "unknown" (the
 * lock is lost at its deadline unless a later renewal finds them); on one server, as here, the
 * guards are gone for good and it answers "lost" (test/semaphore/guards-evicted-*). Redis and
 * the in-memory store answer alike.
 */
describe('a renewal that does not find the guards beside a reader or a permit', () => {
  const redis = useRedis();
  const LEASE = 60_000;
  let run = 0;

  const onBoth = async (scenario: (store: LockScripts | MemoryStore, drop: (what: 'lock' | 'entry', key: string, token: string) => Promise<void>, key: string) => Promise<unknown>) => {
    const key = `guards-${++run}`;
    const data = new MemoryData();
    const onRedis = await scenario(
      new LockScripts(redis),
      async (what, base, token) => void (what === 'lock' ? await redis.del(base) : await redis.hdel(base, token)),
      key,
    );
    const memory = await scenario(
      new MemoryStore(data, new ManualClock(), () => undefined),
      async (what, base, token) => {
        if (what === 'lock') data.locks.delete(base);
        else if (base.endsWith(':holders')) data.semaphoreHolders.get(base)?.value.delete(token);
        else data.readers.get(base)?.value.delete(token);
      },
      key,
    );
    return { redis: onRedis, memory };
  };

  it('a reader: without the ~r value, or without its entry, its lease is not renewed', async () => {
    const answers = await onBoth(async (store, drop, key) => {
      const base = lockRedisKeys('lock:', key);
      const reader = (token: string) => readKeys(base, token, key);
      await store.readers.acquire(reader('r1'), 'r1', LEASE, false, 1_000);
      await store.readers.acquire(reader('r2'), 'r2', LEASE, false, 1_000);
      const before = [await store.renew(reader('r1').lock, 'r1', LEASE), await store.renew(reader('r2').lock, 'r2', LEASE)];
      await drop('entry', `${base.lock}:readers`, 'r1');
      const withoutEntry = await store.renew(reader('r1').lock, 'r1', LEASE);
      await drop('lock', base.lock, 'r2');
      const withoutLock = await store.renew(reader('r2').lock, 'r2', LEASE);
      return { before, withoutEntry, withoutLock };
    });
    expect(answers.redis).toEqual({ before: [true, true], withoutEntry: false, withoutLock: false });
    expect(answers.memory).toEqual(answers.redis);
  });

  it('a permit: without its holder entry, its lease is not renewed', async () => {
    const answers = await onBoth(async (store, drop, key) => {
      const names = (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 3, 1);
      await store.semaphores.acquire(names('h1'), 'h1', LEASE, false, 1_000);
      await store.semaphores.acquire(names('h2'), 'h2', LEASE, false, 1_000);
      const before = await store.renew(names('h1').lock, 'h1', LEASE);
      await drop('entry', names('h1').semaphore.holders, 'h1');
      return { before, withoutEntry: await store.renew(names('h1').lock, 'h1', LEASE) };
    });
    expect(answers.redis).toEqual({ before: true, withoutEntry: false });
    expect(answers.memory).toEqual(answers.redis);
  });
});
