import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review of foreign data at the lock's keys (s51). `LockInspection.fencingToken` is "the
 * token of its latest acquisition; `undefined` when the lock was never acquired (or its counter is
 * gone)", and 0 is "no token" throughout the API. A counter holding `0` (set by hand, an operator's
 * "reset") is one no acquisition handed out: the next acquisition's `INCR` answers 1 and starts it
 * at the server's clock, as a counter Redis lost (docs/redis-data.md). inspect() reported it as
 * `fencingToken: 0`. And a counter written as `007` or `-0`, which `INCR` refuses ("not an
 * integer"), so every acquisition of the key fails naming it, was reported as the token 7 or -0,
 * where a word makes inspect() say what is wrong.
 */
describe('inspect() of a key whose fencing counter holds 0', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('reports no token, as for a counter that is gone; the next acquisition starts it at the clock', async () => {
    const { locks } = await app();
    await redis.set('lock:{zero-counter}:fence', '0');
    const inspection = await locks.inspect('zero-counter');
    expect(inspection).toEqual({ key: 'zero-counter', held: false, waiters: 0 });
    const lock = await locks.acquire('zero-counter');
    try {
      expect(lock.fencingToken).toBeGreaterThan(1_000_000_000_000);
    } finally {
      await lock.release();
    }
  });

  it.each([['007'], ['-0']])('%s: rejects naming the remedy, as acquire() does', async (value) => {
    const { locks } = await app();
    await redis.set('lock:{padded-counter}:fence', value);
    const tried = await locks.tryAcquire('padded-counter').then(
      (lock) => new Error(`granted with ${lock?.fencingToken}`),
      (caught: unknown) => caught as Error,
    );
    const said = await locks.inspect('padded-counter').then(
      (inspection) => new Error(`inspected: ${JSON.stringify(inspection)}`),
      (caught: unknown) => caught as Error,
    );
    for (const error of [tried, said]) {
      expect(error.message).toMatch(/holds data this library did not write.*keyPrefix/);
      expect(error).toBeInstanceOf(RedisLockError);
    }
  });
});
