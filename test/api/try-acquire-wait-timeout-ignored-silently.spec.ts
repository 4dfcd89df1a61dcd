/**
 * Found by review (thirty-seventh session). `tryAcquire(key, options)` makes one attempt and never
 * waits, but took a `waitTimeout` without a word and returned `null` at once, the holder about to
 * release. Redisson's `tryLock(waitTime, leaseTime)` waits up to `waitTime` before it gives up, so
 * `tryAcquire(key, { waitTimeout: 5_000 })` reads as "wait up to 5 s, then null": a job written so
 * skipped its run as "held elsewhere" while the lock was free within milliseconds. An option the
 * call drops is refused elsewhere (`permits` without `limit`, a misspelt name: "would be dropped
 * without a word", lib/core/options/lock-options.ts).
 */
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { useRedis } from '../support/redis.js';

describe.each(useBothStores())('tryAcquire() given a waitTimeout ($label)', (backend) => {
  useRedis();

  it.each([
    ['one key', false],
    ['a key list', true],
  ])('is refused naming the call and the option, before anything is asked (%s)', async (_, list) => {
    const { locks } = await backend.open();
    const key = uniqueKey('try-wait');
    const outcome = await (list ? locks.tryAcquire([key, `${key}:b`], { waitTimeout: 5_000 }) : locks.tryAcquire(key, { waitTimeout: '5s' })).then(
      (lock) => (lock === null ? 'null at once' : 'lock'),
      (error: unknown) => error,
    );
    // Before: 'lock' here (the key is free), and 'null at once' behind a holder about to release.
    expect(outcome).toBeInstanceOf(InvalidLockOptionsError);
    expect((outcome as InvalidLockOptionsError).option).toBe('waitTimeout');
    expect((outcome as Error).message).toMatch(list ? /^tryAcquire\(keys\): Option "waitTimeout"/ : /^tryAcquire\(".*"\): Option "waitTimeout"/);
    expect((outcome as Error).message).toContain('acquire(key, { waitTimeout })');
    expect(await locks.isLocked(key)).toBe(false);
  });

  it('still takes a waitTimeout of 0, which says what tryAcquire() does', async () => {
    const { locks } = await backend.open();
    const key = uniqueKey('try-zero');
    const lock = await locks.tryAcquire(key, { waitTimeout: 0 });
    expect(lock).not.toBeNull();
    await lock!.release();
  });
});
