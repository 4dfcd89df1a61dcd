import { LockKeyError } from '../../errors/lock-key.error.js';

export const MAX_KEY_LENGTH = 1024;

/** A high surrogate not followed by a low one, or a low one not after a high one. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The Redis names of one lock. */
export interface LockRedisKeys {
  /** Holds the owner token while the lock is held; expires with the lease. */
  lock: string;
  /** Counter behind the fencing tokens; never expires, so tokens keep increasing. */
  fence: string;
  /** Waiting order (a list of waiter tokens). */
  queue: string;
  /** Until when each waiter is alive (a sorted set, Redis server time). */
  waiters: string;
  /** Channel on which a release names the waiter whose turn it is. */
  released: string;
}

/**
 * The names of a lock's other keys: its own name plus these. The scripts derive them the same
 * way outside a Redis Cluster (see `stores/redis/lock-lua.ts`).
 */
export const LOCK_KEY_SUFFIXES = { fence: ':fence', queue: ':queue', waiters: ':waiters', released: ':released', wanted: ':wanted' } as const;

/**
 * While barging waiters wait for a lock (`fairness: 'barging'`), this key says so, until a
 * waiter lease after the latest one asked: a release then publishes that the lock is free.
 * Every store derives it from the lock's name (it is never a declared key of a script call).
 */
export const wantedKey = (lock: string): string => lock + LOCK_KEY_SUFFIXES.wanted;

/** Checks a user's key and returns it; `what` names it in the error (e.g. `key`). */
export function checkLockKey(key: unknown, what = 'key'): string {
  if (typeof key !== 'string') {
    throw new LockKeyError(`The lock ${what} must be a string, got ${key === null ? 'null' : typeof key}.`);
  }
  if (key.length === 0) throw new LockKeyError(`The lock ${what} must not be empty.`);
  // Redis gets keys as UTF-8, where every lone surrogate becomes U+FFFD: keys that differ only
  // there would be one lock in Redis and several here (a multi-key call would wait for itself).
  if (LONE_SURROGATE.test(key)) {
    throw new LockKeyError(
      `The lock ${what} is not well-formed Unicode: it holds a lone surrogate (as slicing a string through an emoji leaves), which Redis would store as U+FFFD, the same lock as other keys. Use String.prototype.toWellFormed() or cut on code points.`,
    );
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw new LockKeyError(
      `The lock ${what} is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are allowed. ` +
        'Hash long identifiers before using them as lock keys.',
    );
  }
  return key;
}

/**
 * Lays out the Redis names of a lock as `<prefix>{<key>}` plus siblings, so that all of them
 * hash to one Redis Cluster slot whatever the key contains.
 *
 * NOTE: Redis hashes the text between the first `{` and the first `}` after it, unless that
 * text is empty. The prefix has no braces, so the tag starts right after our `{` and is empty
 * only when the key itself starts with `}`. For such keys (and, to keep the mapping one-to-one,
 * for keys starting with the escape character) a backslash is put in front.
 */
export function lockRedisKeys(prefix: string, key: string): LockRedisKeys {
  const tagged = key.startsWith('}') || key.startsWith('\\') ? `\\${key}` : key;
  const lock = `${prefix}{${tagged}}`;
  return { lock, fence: lock + LOCK_KEY_SUFFIXES.fence, queue: lock + LOCK_KEY_SUFFIXES.queue, waiters: lock + LOCK_KEY_SUFFIXES.waiters, released: lock + LOCK_KEY_SUFFIXES.released };
}
