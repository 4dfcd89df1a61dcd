import type { LockRedisKeys } from '../keys/lock-key.js';

/** What a semaphore call adds to a lock's Redis names: its own holder set, limit and admission rule. */
export interface SemaphoreCall {
  /** The key as the caller gave it, for error messages. */
  key: string;
  /** Hash of live holders: owner token -> `<permits>:<fencing token>`. */
  holders: string;
  /** The limit every caller of this semaphore must agree on, kept while it has holders or waiters. */
  limitKey: string;
  limit: number;
  permits: number;
}

/** The Redis names of one acquisition of a semaphore. */
export interface SemaphoreKeys extends LockRedisKeys {
  semaphore: SemaphoreCall;
}

/**
 * Lays out one semaphore acquisition next to the mutex names of the same key, all in its
 * `{key}` Cluster slot: `lock` is this holder's own permit (`<lock>:permit:<token>`, expiring
 * with its lease, renewed by the same scripts as a mutex), and the queue, waiters and channel
 * are the semaphore's own (`:sq`, `:sw`, `:sr`), so a mutex of the same name never meets them.
 * The fencing counter is shared with that mutex: tokens only grow either way.
 */
export function semaphoreKeys(base: LockRedisKeys, token: string, key: string, limit: number, permits: number): SemaphoreKeys {
  const root = base.lock;
  return {
    lock: `${root}:permit:${token}`,
    fence: base.fence,
    queue: `${root}:sq`,
    waiters: `${root}:sw`,
    released: `${root}:sr`,
    semaphore: { key, holders: `${root}:holders`, limitKey: `${root}:limit`, limit, permits },
  };
}

export function isSemaphore(names: LockRedisKeys): names is SemaphoreKeys {
  return (names as Partial<SemaphoreKeys>).semaphore !== undefined;
}
