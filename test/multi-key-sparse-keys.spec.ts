import { describe, expect, it } from 'vitest';
import { LockKeyError } from '../lib/index.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/**
 * Found by review. LockService.acquire JSDoc: "@throws LockKeyError / InvalidLockOptionsError for a bad
 * key or option, before Redis is asked", and the behaviour suite's "names the argument in
 * errors for bad key lists" (`keys[1]`).
 *
 * `canonicalKeys` (lib/core/multi-key/canonical-keys.ts) checks the keys with `keys.map(...)`,
 * which skips the holes of a sparse array; `new Set(checked)` then turns each hole into
 * `undefined`, which `sort` puts last. So a list with a hole (`[, 'a']`, `keys.length = n`, a
 * `delete keys[i]`) passes the check, the good keys are acquired in Redis, and only then does the
 * single-key acquire of `undefined` fail, with a message that does not name `keys[i]`.
 */
describe('a key list with a hole', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('is refused naming the missing entry, before any key is taken in Redis', async () => {
    const { locks } = await app();
    const keys: string[] = [];
    keys[1] = 'sparse:a'; // keys[0] is a hole
    const error = await locks.acquire(keys).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKeyError);
    // Current code: 'sparse:a' was acquired (its fencing counter exists) and given back.
    expect(await redis.exists('lock:{sparse:a}:fence')).toBe(0);
    expect((error as Error).message).toMatch(/keys\[0\]/);
  });

  it('is refused by tryAcquire too, before any key is taken in Redis', async () => {
    const { locks } = await app();
    const keys = ['sparse:b', 'sparse:c'];
    delete keys[1];
    const error = await locks.tryAcquire(keys).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKeyError);
    expect(await redis.exists('lock:{sparse:b}:fence')).toBe(0);
  });
});
