/**
 * A semaphore acquire that hands free permits to the waiters queued ahead of its caller, and
 * empties the queue with permits still free, answers "busy" to its caller instead of taking one.
 *
 * Promise (docs/lock-family.md, "Semaphores"): at most `limit` permits are held, waiters are served
 * in arrival order and "a request that does not fit yet is never overtaken"; a caller that nobody
 * is queued ahead of and that fits is let in (docs/redis-data.md: "An acquire that hands free
 * permits to the waiters ahead of its caller may reach the caller too: it then answers
 * 'acquired'"). The read side does exactly that: READ_ACQUIRE (lib/core/rwlock/read-lua.ts:47-68)
 * grants the readers ahead, then looks at the queue again and lets its caller in when nobody is
 * left ahead of it.
 *
 * What happens: limit 2, two holders crash (their leases run out) while w waits. A tryAcquire
 * (enqueue false) of t now frees both permits, grants one to w (the head), and with the queue
 * empty and one permit free still answers {acquired: false}: ACQUIRE_FULL
 * (lib/core/semaphore/semaphore-lua.ts:459-476) only checks whether the grants reached its caller
 * (a caller already queued), never whether a caller not queued now fits; MemorySemaphores.acquire
 * (lib/core/semaphore/memory-semaphores.ts:42-54) does the same. The same try sent again at once
 * succeeds (nothing changed but the stale ':queued' mark), so `tryAcquire()` fails spuriously,
 * and a waiting acquire spends a queue round (join, then its next attempt) for a free permit.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { systemClock } from '../../lib/core/time/clock.js';
import { redisUrl } from '../support/redis.js';

const WAITER_LEASE = 1_000;
const TTL = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(['redis', 'memory'] as const)('a semaphore try after crashed holders, on %s', (kind) => {
  const redis = new Redis(redisUrl());
  afterAll(() => redis.quit());
  const data = new MemoryData();
  const store = kind === 'redis' ? new LockScripts(redis) : new MemoryStore(data, systemClock, () => undefined);
  /** Whether the permit key of a holder is still there (its lease has not run out). */
  const permitLives = async (lock: string) => (kind === 'redis' ? (await redis.exists(lock)) === 1 : (data.locks.get(lock)?.expiresAt ?? -1) >= systemClock.now());

  it('lets a caller that fits take a free permit once the waiters ahead of it were served', async () => {
    const key = `review-try-${kind}-${process.pid}-${Date.now()}`;
    const keys = (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 2, 1);
    const ks = { h1: keys('h1'), h2: keys('h2'), w: keys('w'), t: keys('t') };
    expect(await store.semaphores.acquire(ks.h1, 'h1', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await store.semaphores.acquire(ks.h2, 'h2', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await store.semaphores.acquire(ks.w, 'w', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // Both holders crash: their leases run out (made 1 ms, as an extend() to 1 ms would).
    expect(await store.renew(ks.h1.lock, 'h1', 1)).toBe(true);
    expect(await store.renew(ks.h2.lock, 'h2', 1)).toBe(true);
    while ((await permitLives(ks.h1.lock)) || (await permitLives(ks.h2.lock))) await sleep(2);

    // Two permits free, w queued: t's try grants w its permit and should take the other.
    const first = await store.semaphores.acquire(ks.t, 't', TTL, false, WAITER_LEASE);
    // w got its permit either way (it was first), and nobody else waits.
    expect(await permitLives(ks.w.lock)).toBe(true);
    // The very same try, sent again with nothing released meanwhile, is let in.
    const second = first.acquired ? first : await store.semaphores.acquire(ks.t, 't', TTL, false, WAITER_LEASE);
    expect(second).toMatchObject({ acquired: true });
    expect({ first: first.acquired }).toEqual({ first: true });
  });
});
