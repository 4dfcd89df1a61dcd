import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review of a032899. The in-memory store of `nestjs-redis-lock/testing` must answer as
 * Redis does. Since a032899 its `grantFitting` looks at the queue's head even when no permit is
 * free (a waiter's leave, or an acquire that took the last permit), and its `liveHead` drops a
 * waiter that lapsed more than one more waiter lease ago there. The script's `grant_fitting`
 * does not look at the head of a full semaphore at all (`used >= lim`: "dead waiters there go at
 * the next release's look", docs/redis-data.md), so on Redis that dead waiter stays queued:
 * `inspect()` counts it, and it keeps the semaphore's limit stored (a caller with another limit
 * is refused with the limit in use) where the memory store has forgotten both.
 */
describe('a dead waiter at the head of a full semaphore, when another waiter leaves', () => {
  const redis = useRedis();
  const LEASE = 60_000;
  const WAITER_LEASE = 1_000;
  let run = 0;

  const scenario = async (store: LockScripts | MemoryStore, key: string, time: { between(): Promise<void>; lapseLong(member: string, refresh: () => Promise<unknown>): Promise<void>; crash(permitKey: string): Promise<void> }) => {
    const names = (token: string, limit = 1) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, limit, 1);
    // The only permit is held; w1, then w2, wait.
    expect(await store.semaphores!.acquire(names('h'), 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await store.semaphores!.acquire(names('w1'), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    await time.between();
    expect(await store.semaphores!.acquire(names('w2'), 'w2', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // w1 crashed more than one more waiter lease ago; w2 is alive and refreshes.
    const refreshW2 = async () => expect(await store.semaphores!.acquire(names('w2'), 'w2', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    await time.lapseLong(`w1:${LEASE}:1`, refreshW2);
    await refreshW2();
    // w2's waitTimeout runs out: it leaves. The semaphore is still full.
    await store.semaphores!.leave(names('w2'), 'w2', LEASE, WAITER_LEASE);
    const waiters = (await store.inspectSemaphore(lockRedisKeys('lock:', key)))?.waiters;
    // The holder crashes (its permit's lease runs out); a caller asks with another limit.
    await time.crash(names('h').lock);
    const other = await store.semaphores!.acquire(names('x', 2), 'x', LEASE, false, WAITER_LEASE);
    return { waiters, otherLimit: other.acquired ? 'acquired' : 'limitInUse' in other ? `limit in use ${other.limitInUse}` : 'busy' };
  };

  it('leaves the same queue, and gives the same answers, on Redis and in memory', async () => {
    const key = `dead-full-${++run}`;
    const onRedis = await scenario(new LockScripts(redis), key, {
      between: async () => undefined,
      lapseLong: async (member) => {
        const [seconds, micros] = await redis.time();
        const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        await redis.zadd(`lock:{${key}}:sw`, 'XX', now - 1_500, member);
      },
      crash: async (permitKey) => {
        await redis.del(permitKey);
      },
    });
    const clock = new ManualClock();
    const memory = new MemoryStore(new MemoryData(), clock, () => undefined);
    const onMemory = await scenario(memory, key, {
      // w1 queues at 0 (alive until 1000), w2 at 600 and refreshes at 1300; w1 is 1.1 s dead at 2100.
      between: () => clock.advance(600),
      lapseLong: async (_member, refresh) => {
        await clock.advance(700);
        await refresh();
        await clock.advance(800);
      },
      crash: async (permitKey) => memory.delete(permitKey),
    });
    // What Redis holds: the dead w1 is still queued (counted by inspect) and keeps the limit stored.
    expect(onRedis).toEqual({ waiters: 1, otherLimit: 'limit in use 1' });
    expect(onMemory).toEqual(onRedis);
  });
});
