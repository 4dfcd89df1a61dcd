import type { LockRedisKeys } from '../keys/lock-key.js';

/** What a semaphore call adds to a lock's Redis names: its own holder set, limit and admission rule. */
export interface SemaphoreCall {
  /** The key as the caller gave it, for error messages. */
  key: string;
  /**
   * Hash of holders: owner token -> `<permits>:<fencing token>`, and in fields no token can name
   * the limit every caller must agree on (`:limit`, kept while the semaphore has holders or
   * waiters) and the permits held in all (`:used`); or, for a holder alone off a Cluster, its
   * one field `!<token>` -> `<permits>:<limit>:<fencing token>` (see LONE in `semaphore-lua.ts`).
   */
  holders: string;
  /** Sorted set of holders, each scored with the server time until which its permit is known to live. */
  due: string;
  limit: number;
  permits: number;
  /**
   * Set by the Redis store when this acquisition took the semaphore alone (see LONE in
   * `semaphore-lua.ts`), so that its release tries one plain `HDEL` first.
   */
  lone?: boolean;
}

/**
 * The semaphore's names beside its key's own (`<lock>` plus these); the scripts derive them the
 * same way outside a Redis Cluster (see `semaphore-lua.ts`).
 */
export const SEMAPHORE_SUFFIXES = { permit: ':permit:', queue: ':sq', waiters: ':sw', released: ':sr', holders: ':holders', due: ':due' } as const;

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
  const s = SEMAPHORE_SUFFIXES;
  return {
    lock: root + s.permit + token,
    fence: base.fence,
    queue: root + s.queue,
    waiters: root + s.waiters,
    released: root + s.released,
    semaphore: { key, holders: root + s.holders, due: root + s.due, limit, permits },
  };
}

export function isSemaphore(names: LockRedisKeys): names is SemaphoreKeys {
  return (names as Partial<SemaphoreKeys>).semaphore !== undefined;
}
