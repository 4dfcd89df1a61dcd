/**
 * Found by review (thirty-seventh session). `LockService.current(key)` given a key no lock can
 * have (not a string, empty, longer than 1024 characters, or holding a lone surrogate) returned
 * `undefined`, as for a key the chain does not hold: `current(order.id)` with a numeric id, or an
 * emoji cut in half, read as "not locked here" and the code went on without the lock's signal or
 * token. `acquire()`, `isLocked()` and `inspect()` refuse the same keys with a `LockKeyError`
 * naming the method (`isLocked(key): The lock key must be a string, got number.`);
 * lib/core/engine/lock-manager.ts, `current()`, compared `held.key === key` without a check.
 * `current()` is synchronous and throws its other errors (a lease past its deadline reported lost
 * goes through the signal, never a rejection), so the refusal is thrown.
 */
import { describe, expect, it } from 'vitest';
import { LockKeyError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

const BAD_KEYS: [string, unknown, RegExp][] = [
  ['a number', 42, /^current\(key\): The lock key must be a string, got number\.$/],
  ['null', null, /^current\(key\): The lock key must be a string, got null\.$/],
  ['empty', '', /^current\(key\): The lock key must not be empty\.$/],
  ['over-long', 'k'.repeat(1025), /^current\(key\): The lock key is 1025 characters long; at most 1024/],
  ['a lone surrogate', 'order:\uD83D', /^current\(key\): The lock key is not well-formed Unicode/],
];

describe('current(key) with a key no lock can have', () => {
  useRedis();
  const app = useLockApps();

  it.each(BAD_KEYS)('refuses %s with a LockKeyError naming current(key), inside a chain and outside one', async (_what, key, message) => {
    const { locks } = await app();
    // Outside any call chain: refused too, not undefined.
    expect(() => locks.current(key as string)).toThrow(LockKeyError);
    expect(() => locks.current(key as string)).toThrow(message);
    const inside = await locks.using('order:1', () => {
      try {
        return locks.current(key as string);
      } catch (error) {
        return error;
      }
    }, { ttl: 1_000 });
    // Before: undefined, read as "this chain holds no lock of that key".
    expect(inside).toBeInstanceOf(LockKeyError);
    expect((inside as Error).message).toMatch(message);
    // The same key refused the same way by the read-only calls beside it.
    await expect(locks.isLocked(key as string)).rejects.toThrow(LockKeyError);
    // A good key and no key still answer.
    await locks.using('order:2', () => {
      expect(locks.current('order:2')?.key).toBe('order:2');
      expect(locks.current()?.key).toBe('order:2');
      expect(locks.current('order:3')).toBeUndefined();
    }, { ttl: 1_000 });
  });
});
