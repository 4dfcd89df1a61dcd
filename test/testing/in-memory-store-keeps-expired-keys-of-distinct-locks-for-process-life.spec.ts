/**
 * The in-memory store dropped an expired key only when a call read it, where Redis also expires
 * keys on its own: the fencing counter of each key (under `fenceRetention`), a crashed holder's
 * key, a lapsed waiter's queue, stayed for the life of the process once nobody asked for that
 * key again. A dev server or a long test run on `RedisLockTestingModule` locking `order:<id>` for
 * ever new ids grew without bound: 400 counters held after 200 keys had come and gone past their
 * retention and 200 more were used (the first test), and 800 lock keys and 800 counters, with
 * 200 reader hashes and 200 semaphore hashes among others, where holders and waiters crashed (the
 * second) (review suspicion, forty-fifth session).
 * Store calls now sweep a few keys each, dropping expired ones (no timer); what Redis would
 * keep stays: every counter within its retention.
 */
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { readKeys } from '../../lib/core/rwlock/read-keys.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, ManualClock, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';

const KEYS = 200;
const RETENTION_MS = 60_000;

/** Every key the store holds, by map. */
function keysHeld(data: MemoryData): Record<string, number> {
  const { locks, fences, waiting, semaphoreHolders, semaphoreLimits, readers, wanted } = data;
  return { locks: locks.size, fences: fences.size, waiting: waiting.size, semaphoreHolders: semaphoreHolders.size, semaphoreLimits: semaphoreLimits.size, readers: readers.size, wanted: wanted.size };
}

describe('the in-memory store locking ever new keys', () => {
  it('drops the keys whose time ran out, and keeps the counters within their retention', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const data = (store as unknown as { data: MemoryData }).data;
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: store, ttl: '10s', fenceRetention: RETENTION_MS })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    /** Locks and releases keys `<batch>:<i>`: mutexes, semaphores, read locks. */
    const batch = async (name: string): Promise<void> => {
      for (let i = 0; i < KEYS; i++) {
        const key = `${name}:${i}`;
        const lock = i % 3 === 0 ? await locks.acquire(key, { limit: 2 }) : i % 3 === 1 ? await locks.acquire(key, { mode: 'read' }) : await locks.acquire(key);
        await lock.release();
      }
    };
    try {
      await batch('order');
      // Every key used once, then nobody asks for it again: past the retention, Redis has none left.
      await store.manualClock.advance(RETENTION_MS + 1);
      await batch('invoice');
      // What Redis would hold: the counters of the new keys, within their retention.
      expect(keysHeld(data)).toEqual({ locks: 0, fences: KEYS, waiting: 0, semaphoreHolders: 0, semaphoreLimits: 0, readers: 0, wanted: 0 });
      expect([...data.fences.keys()].filter((fence) => fence.includes('{order:'))).toEqual([]);
      // And a counter within its retention goes on from its last token.
      const before = (await locks.inspect('invoice:5')).fencingToken!;
      const again = await locks.acquire('invoice:5');
      expect(again.fencingToken).toBe(before + 1);
      await again.release();
    } finally {
      await moduleRef.close();
    }
  });

  it('drops what crashed holders and waiters left: their keys, queues and marks', async () => {
    const clock = new ManualClock();
    const data = new MemoryData();
    const store = new MemoryStore(data, clock, () => undefined, RETENTION_MS);
    const LEASE = 10_000;
    for (let i = 0; i < KEYS; i++) {
      const base = lockRedisKeys('lock:', `order:${i}`);
      // A holder and a waiter behind it, a barging waiter of another key, then a semaphore's holder
      // and waiter and a reader: all crash, nobody calls for these keys again.
      expect(await store.acquire(base, 'holder', LEASE, true, LEASE)).toMatchObject({ acquired: true });
      expect(await store.acquire(base, 'waiter', LEASE, true, LEASE)).toMatchObject({ acquired: false });
      expect(await store.acquire(base, 'barging', LEASE, 'barging', LEASE)).toMatchObject({ acquired: false });
      const permit = (token: string) => semaphoreKeys(lockRedisKeys('lock:', `pool:${i}`), token, `pool:${i}`, 1, 1);
      expect(await store.semaphores.acquire(permit('holder'), 'holder', LEASE, true, LEASE)).toMatchObject({ acquired: true });
      expect(await store.semaphores.acquire(permit('waiter'), 'waiter', LEASE, true, LEASE)).toMatchObject({ acquired: false });
      expect(await store.readers.acquire(readKeys(lockRedisKeys('lock:', `report:${i}`), 'reader', `report:${i}`), 'reader', LEASE, true, LEASE)).toMatchObject({ acquired: true });
    }
    await clock.advance(RETENTION_MS + 1);
    // The process goes on with other keys, each locked and released.
    for (let i = 0; i < KEYS; i++) {
      const base = lockRedisKeys('lock:', `invoice:${i}`);
      expect(await store.acquire(base, 'holder', LEASE, true, LEASE)).toMatchObject({ acquired: true });
      expect(await store.release(base, 'holder', LEASE)).toMatchObject({ released: true });
    }
    expect(keysHeld(data)).toEqual({ locks: 0, fences: KEYS, waiting: 0, semaphoreHolders: 0, semaphoreLimits: 0, readers: 0, wanted: 0 });
  });
});
