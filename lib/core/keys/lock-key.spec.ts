import { describe, expect, it } from 'vitest';
import { LockKeyError } from '../../errors/lock-key.error.js';
import { checkLockKey, lockRedisKeys } from './lock-key.js';

/** The part of a key Redis Cluster hashes: the first non-empty `{...}`, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

describe('lockRedisKeys', () => {
  it('wraps the key in a hash tag and derives its siblings', () => {
    expect(lockRedisKeys('lock:', 'order:42')).toEqual({
      lock: 'lock:{order:42}',
      fence: 'lock:{order:42}:fence',
      queue: 'lock:{order:42}:queue',
      waiters: 'lock:{order:42}:waiters',
      released: 'lock:{order:42}:released',
    });
  });

  it.each(['plain', '{a}', 'a}b', '}x', '}', '{', '{}', '\\}', 'ünïcødé 🔒', 'a{b}c{d}', '\\'])(
    'puts every name of key %j in one cluster slot',
    (key) => {
      const names = lockRedisKeys('lock:', key);
      const tags = new Set(Object.values(names).map(hashTag));
      expect(tags.size).toBe(1);
      expect([...tags][0]).not.toBe('');
    },
  );

  it('maps different keys to different names', () => {
    const keys = ['}a', '\\}a', 'a', '\\a', '\\\\a', '}', '\\}', '\\'];
    const locks = keys.map((key) => lockRedisKeys('p:', key).lock);
    expect(new Set(locks).size).toBe(keys.length);
    const all = keys.flatMap((key) => Object.values(lockRedisKeys('p:', key)));
    expect(new Set(all).size).toBe(all.length);
  });
});

describe('checkLockKey', () => {
  it('accepts a non-empty string', () => {
    expect(checkLockKey('x')).toBe('x');
  });

  it.each([
    [undefined, /must be a string, got undefined/],
    [null, /must be a string, got null/],
    [42, /must be a string, got number/],
    [{}, /must be a string, got object/],
    ['', /must not be empty/],
    ['k'.repeat(1025), /1025 characters long; at most 1024/],
  ])('rejects %j with LockKeyError', (key, message) => {
    expect(() => checkLockKey(key)).toThrow(LockKeyError);
    expect(() => checkLockKey(key)).toThrow(message);
  });
});
