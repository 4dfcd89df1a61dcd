import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { readKeys } from '../../lib/core/rwlock/read-keys.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { useRedis } from '../support/redis.js';

/**
 * docs/locks.md ("Dead waiters"): a waiter that lapsed loses its place once the lock comes free
 * for it, and one that refreshes before then keeps it. A read-write lock held by anyone, and a
 * semaphore without enough free permits for the head, are not free for that waiter: a caller
 * that merely asks meanwhile (a reader's attempt, a smaller request refused all the same) must
 * not drop it. The same scenario runs on the Redis scripts and on the in-memory store of
 * `nestjs-redis-lock/testing`, which must answer alike (the end-to-end specs beside this one
 * show it through LockService on Redis).
 */
describe('a waiter that lapsed at the head of a busy lock and refreshes before it comes free', () => {
  const redis = useRedis();
  const LEASE = 60_000;
  const WAITER_LEASE = 1_000;
  let run = 0;

  interface Time {
    /** Between the two waiters' arrivals (600 ms in memory; nothing on Redis, whose lapse is written). */
    between(): Promise<void>;
    /**
     * The first waiter's liveness lease runs out, the second's does not: `just` (100 ms ago, less
     * than one more waiter lease: it may be back) or `long` ago (1.5 s: it is taken for dead).
     */
    lapse(member: string, ago?: 'just' | 'long'): Promise<void>;
  }
  /** Runs `scenario` on the Redis scripts and on the in-memory store (on a manual clock); answers both. */
  const onBoth = async <T>(scenario: (store: LockScripts | MemoryStore, time: Time, key: string) => Promise<T>): Promise<{ redis: T; memory: T }> => {
    const key = `lapsed-${++run}`;
    const onRedis = await scenario(
      new LockScripts(redis),
      {
        between: async () => undefined,
        lapse: async (member, ago = 'just') => {
          const [seconds, micros] = await redis.time();
          const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
          await redis.zadd(`lock:{${key}}:${member.split(':').length === 3 ? 'sw' : 'waiters'}`, 'XX', now - (ago === 'just' ? 100 : 1_500), member);
        },
      },
      key,
    );
    // In memory the first waiter queues at 0, the second at 600, the rest happens at 1100 (2500 for one long dead).
    const clock = new ManualClock();
    const start = clock.now();
    const memory = await scenario(
      new MemoryStore(new MemoryData(), clock, () => undefined),
      {
        between: () => clock.advance(600),
        // The first waiter queued at 0: alive until 1000.
        lapse: (_member, ago = 'just') => clock.advance((ago === 'just' ? 1_100 : 2_500) - (clock.now() - start)),
      },
      key,
    );
    return { redis: onRedis, memory };
  };

  for (const holder of ['reader', 'writer'] as const) {
    it(`keeps its place at a read-write lock held by a ${holder}, when a reader asks meanwhile`, async () => {
      const answers = await onBoth(async (store, time, key) => {
        const base = lockRedisKeys('lock:', key);
        const reader = (token: string) => readKeys(base, token, key);
        if (holder === 'reader') expect(await store.readers.acquire(reader('h'), 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
        else expect(await store.acquire(base, 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
        expect(await store.acquire(base, 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
        await time.between();
        expect(await store.acquire(base, 'w2', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
        await time.lapse(`w1:${LEASE}`);
        // A reader asks (tryAcquire): refused, a writer waits.
        expect(await store.readers.acquire(reader('probe'), 'probe', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: false });
        // The first writer refreshes, then the holder lets go.
        expect(await store.acquire(base, 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
        const released = holder === 'reader' ? await store.readers.release(reader('h'), 'h', WAITER_LEASE) : await store.release(base, 'h', WAITER_LEASE);
        return released.grants?.map((grant) => grant.token) ?? [released.grant?.token];
      });
      expect(answers).toEqual({ redis: ['w1'], memory: ['w1'] });
    });
  }

  it('keeps its place behind the readers a release lets in, and the readers behind it wait', async () => {
    const answers = await onBoth(async (store, time, key) => {
      const base = lockRedisKeys('lock:', key);
      const reader = (token: string) => readKeys(base, token, key);
      expect(await store.acquire(base, 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
      expect(await store.readers.acquire(reader('r1'), 'r1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      expect(await store.acquire(base, 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      await time.between();
      expect(await store.readers.acquire(reader('r2'), 'r2', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      await store.readers.acquire(reader('r1'), 'r1', LEASE, true, WAITER_LEASE);
      await time.lapse(`w1:${LEASE}`);
      const released = await store.release(base, 'h', WAITER_LEASE);
      // r1 comes in; w1 (lapsed, but the lock is not free for a writer) keeps its place, and r2 waits behind it.
      const later = await store.acquire(base, 'w1', LEASE, true, WAITER_LEASE);
      return { let: (released.grants ?? [released.grant]).map((grant) => grant?.token), w1Waits: !later.acquired, r2: (await store.readers.acquire(reader('r2'), 'r2', LEASE, true, WAITER_LEASE)).acquired };
    });
    expect(answers.redis).toEqual({ let: ['r1'], w1Waits: true, r2: false });
    expect(answers.memory).toEqual(answers.redis);
  });

  it('keeps its place at a semaphore whose free permits are fewer than it asks, when a smaller request asks meanwhile', async () => {
    const answers = await onBoth(async (store, time, key) => {
      const names = (token: string, permits: number) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 3, permits);
      // 2 of 3 permits held: 1 free, not enough for a request of 2.
      expect(await store.semaphores.acquire(names('h', 2), 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
      expect(await store.semaphores.acquire(names('w1', 2), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      await time.between();
      expect(await store.semaphores.acquire(names('w2', 2), 'w2', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      await time.lapse(`w1:${LEASE}:2`);
      // A request of 1 fits the free permit, but may not pass the queue: refused.
      expect(await store.semaphores.acquire(names('probe', 1), 'probe', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: false });
      expect(await store.semaphores.acquire(names('w1', 2), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      const released = await store.semaphores.release(names('h', 2), 'h', WAITER_LEASE);
      return released.grants.map((grant) => grant.token);
    });
    expect(answers).toEqual({ redis: ['w1'], memory: ['w1'] });
  });

  it('is taken for dead once it lapsed more than one more waiter lease ago: a reader then drops it from a read lock', async () => {
    const answers = await onBoth(async (store, time, key) => {
      const base = lockRedisKeys('lock:', key);
      const reader = (token: string) => readKeys(base, token, key);
      expect(await store.readers.acquire(reader('h'), 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
      expect(await store.acquire(base, 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      await time.lapse(`w1:${LEASE}`, 'long');
      return (await store.readers.acquire(reader('probe'), 'probe', LEASE, false, WAITER_LEASE)).acquired;
    });
    expect(answers).toEqual({ redis: true, memory: true });
  });

  it('is taken for dead once it lapsed more than one more waiter lease ago: a smaller semaphore request then drops it', async () => {
    const answers = await onBoth(async (store, time, key) => {
      const names = (token: string, permits: number) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 3, permits);
      expect(await store.semaphores.acquire(names('h', 2), 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
      expect(await store.semaphores.acquire(names('w1', 2), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
      await time.lapse(`w1:${LEASE}:2`, 'long');
      return (await store.semaphores.acquire(names('probe', 1), 'probe', LEASE, false, WAITER_LEASE)).acquired;
    });
    expect(answers).toEqual({ redis: true, memory: true });
  });
});
