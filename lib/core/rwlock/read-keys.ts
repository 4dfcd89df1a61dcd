import type { LockRedisKeys } from '../keys/lock-key.js';

/** What a read acquisition adds to a lock's Redis names. */
export interface ReadCall {
  /** The key as the caller gave it, for error messages. */
  key: string;
  /** The lock itself (`P{K}`), which holds '~r' while readers hold it. */
  shared: string;
  /** Hash of the readers: owner token -> fencing token. */
  readers: string;
}

/** The Redis names of one read acquisition: `lock` is this reader's own key, renewed like a lock. */
export interface ReadKeys extends LockRedisKeys {
  read: ReadCall;
}

/** The lock key's value while readers hold it (never an owner token). */
export const READ_HELD = '~r';

/**
 * Lays out one read acquisition of the lock `base`: the reader's own key
 * `<lock>:reader:<token>` (its lease), the readers hash `<lock>:readers`; queue, waiters,
 * channel and fencing counter are the lock's own, in its `{key}` slot.
 */
export function readKeys(base: LockRedisKeys, token: string, key: string): ReadKeys {
  return {
    lock: `${base.lock}:reader:${token}`,
    fence: base.fence,
    queue: base.queue,
    waiters: base.waiters,
    released: base.released,
    read: { key, shared: base.lock, readers: `${base.lock}:readers` },
  };
}

export function isRead(names: LockRedisKeys): names is ReadKeys {
  return (names as Partial<ReadKeys>).read !== undefined;
}
