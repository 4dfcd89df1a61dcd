import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (a differential run of the semaphore scripts against the in-memory store).
 *
 * A semaphore whose permits are all held admits nobody, so the Redis acquire script does not
 * look at the head of the queue at all (docs/redis-data.md: "a caller that finds the semaphore
 * full joins the queue without reading its head (dead waiters there go at the next release's
 * look)"). A waiter whose liveness lapsed (its refresh came late: a GC pause, a slow event loop)
 * and that refreshes while the semaphore is still full keeps its place: `ZADD` of a member that
 * is still in the set adds nothing to the list.
 *
 * The in-memory store of `nestjs-redis-lock/testing` reads the head on every acquire
 * (`MemorySemaphores.acquire` calls `liveHead` whether or not a permit is free), drops the lapsed
 * waiter, and queues its refresh at the back: the next release hands the permit to someone else.
 * (The in-memory mutex does what Redis does: it only reads the head of a free lock.)
 */
describe('a semaphore waiter whose liveness lapsed and that refreshes while every permit is held', () => {
  const redis = useRedis();
  const LEASE = 60_000;
  const WAITER_LEASE = 1_000;
  const key = 'late-waiter';
  const names = (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 1, 1);

  it('keeps its place on Redis and on the in-memory store alike', async () => {
    // Redis: h holds the one permit; w1 then w2 queue.
    const scripts = new LockScripts(redis).semaphores;
    expect(await scripts.acquire(names('h'), 'h', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.acquire(names('w1'), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await scripts.acquire(names('w2'), 'w2', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // w1's liveness lapses (its deadline in the waiters set is past), w2's does not; then w1's late refresh.
    await redis.zadd(`lock:{${key}}:sw`, 'XX', 0, `w1:${LEASE}:1`);
    expect(await scripts.acquire(names('w1'), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    const onRedis = await scripts.release(names('h'), 'h', WAITER_LEASE);

    // In memory, the same on a manual clock: w1 queues at 0, w2 at 600, w1 refreshes at 1100
    // (its lease ran out at 1000, w2's runs until 1600).
    const clock = new ManualClock();
    const memory = new MemoryStore(new MemoryData(), clock, () => undefined).semaphores;
    expect(await memory.acquire(names('h'), 'h', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await memory.acquire(names('w1'), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    await clock.advance(600);
    expect(await memory.acquire(names('w2'), 'w2', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    await clock.advance(500);
    expect(await memory.acquire(names('w1'), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    const inMemory = await memory.release(names('h'), 'h', WAITER_LEASE);

    // Redis hands the permit to w1, which kept its place.
    expect(onRedis.grants.map((grant) => grant.token)).toEqual(['w1']);
    // The in-memory store must give the same answer (it gives it to w2).
    expect(inMemory.grants.map((grant) => grant.token)).toEqual(onRedis.grants.map((grant) => grant.token));
  });
});
