/**
 * A waiter that learns of its grant by polling (it missed the release message; under
 * `waitForReplicas`, or once its place was lost, every grant is confirmed this way) takes the
 * lock with an acquire that finds the key holding its own token. That attempt answered the
 * fencing counter as it stood: the grant's token, unless a semaphore of the same name, which
 * shares the counter (`semaphoreKeys`), had taken the next token since, and then that one, which
 * a permit holder already held: two holders with one token, where docs/locks.md promises tokens
 * "strictly increasing per key" (a fenced resource accepts both). Found by review (thirty-third
 * session); the quorum masters' ACQUIRE already takes the next token on that path. Both stores
 * (the in-memory one must answer as Redis does) now answer the next token.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { redisUrl } from '../support/redis.js';

const TTL = 60_000;
const WAITER_LEASE = 60_000;

describe.each(['redis', 'memory'] as const)('a grant confirmed by polling after a same-named semaphore took a token, on %s', (kind) => {
  const redis = new Redis(redisUrl());
  afterAll(() => redis.quit());
  const store = kind === 'redis' ? new LockScripts(redis) : new MemoryStore(new MemoryData(), new ManualClock(), () => undefined);

  it('gets a token of its own, above the permit holder\'s, not the permit holder\'s', async () => {
    const key = `polled-grant-${kind}-${process.pid}-${Date.now()}`;
    const keys = lockRedisKeys('lock:', key);
    const held = await store.acquire(keys, 'holder', TTL, true, WAITER_LEASE);
    expect(held).toMatchObject({ acquired: true });
    expect(await store.acquire(keys, 'waiter', TTL, true, WAITER_LEASE)).toMatchObject({ acquired: false, joined: true });
    // The release hands the lock to the waiter; its message never reaches it.
    const released = await store.release(keys, 'holder', WAITER_LEASE);
    expect(released.grant?.token).toBe('waiter');
    const granted = released.grant!.fencingToken;
    // A semaphore of the same name takes the next token of the shared counter.
    const permitKeys = semaphoreKeys(keys, 'permit', key, 2, 1);
    const permit = await store.semaphores.acquire(permitKeys, 'permit', TTL, false, WAITER_LEASE);
    expect(permit).toMatchObject({ acquired: true });
    const permitToken = (permit as { fencingToken: number }).fencingToken;
    expect(permitToken).toBeGreaterThan(granted);
    // The waiter's next attempt (its poll) finds the lock its own.
    const polled = await store.acquire(keys, 'waiter', TTL, true, WAITER_LEASE);
    expect(polled).toMatchObject({ acquired: true });
    expect((polled as { fencingToken: number }).fencingToken).toBeGreaterThan(permitToken);
    await store.release(keys, 'waiter', WAITER_LEASE);
    await store.semaphores.release(permitKeys, 'permit', WAITER_LEASE);
  });
});
