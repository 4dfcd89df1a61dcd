/**
 * An acquire attempt that finds the lock already its own token's (an earlier attempt of the same
 * call took it and its reply was lost, or a release handed it over and the waiter polls) answers
 * the key's counter. When that counter was lost meanwhile (evicted on Redis; on the in-memory store,
 * expired after `fenceRetention`), both stores start it again at the clock, as a lost counter
 * starts everywhere else, rather than answer 0: below every token a fenced resource kept, so it
 * would refuse every write of the lock's own holder (docs/locks.md: `fencingToken` is "strictly
 * increasing per key"). The Redis side of this was found by review (61bd771); the in-memory
 * store, which must answer as Redis does, answered 0 too.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { redisUrl } from '../support/redis.js';

const TTL = 60_000;
const RETENTION = 10_000;

describe.each(['redis', 'memory'] as const)('an attempt of the holder\'s own token after its counter was lost, on %s', (kind) => {
  const redis = new Redis(redisUrl());
  afterAll(() => redis.quit());
  const data = new MemoryData();
  const clock = new ManualClock();
  const store = kind === 'redis' ? new LockScripts(redis, RETENTION) : new MemoryStore(data, clock, () => undefined, RETENTION);

  it('answers a token above the one it was granted, not 0', async () => {
    const keys = lockRedisKeys('lock:', `own-attempt-${kind}-${process.pid}-${Date.now()}`);
    const first = await store.acquire(keys, 'holder', TTL, true, 1_000);
    expect(first).toMatchObject({ acquired: true });
    const granted = (first as { fencingToken: number }).fencingToken;
    // The counter goes while the lock stays: evicted on Redis, past its retention in memory.
    if (kind === 'redis') expect(await redis.del(keys.fence)).toBe(1);
    else await clock.advance(RETENTION + 1);
    const again = await store.acquire(keys, 'holder', TTL, true, 1_000);
    expect(again).toMatchObject({ acquired: true });
    expect((again as { fencingToken: number }).fencingToken).toBeGreaterThan(granted);
    await store.release(keys, 'holder', 1_000);
  });
});
