import type { LockRedisKeys } from '../keys/lock-key.js';
import { readKeys } from '../rwlock/read-keys.js';
import { semaphoreKeys } from '../semaphore/semaphore-keys.js';
import type { SemaphoreRequest } from '../semaphore/semaphore-options.js';

/**
 * What an acquisition is taking (a mutex, a read lock, or semaphore permits): the Redis names
 * of one call. A reader's and a semaphore's include the caller's own key, named by its token,
 * so a call that goes on under a new token names its keys again.
 */
export interface LockKind {
  readonly name: 'mutex' | 'read' | 'semaphore';
  names(token: string): LockRedisKeys;
}

/** The kind of one call on `key`, whose shared names are `base`. */
export function lockKind(key: string, base: LockRedisKeys, semaphore: SemaphoreRequest | undefined, read: boolean): LockKind {
  if (read) return { name: 'read', names: (token) => readKeys(base, token, key) };
  if (semaphore !== undefined) return { name: 'semaphore', names: (token) => semaphoreKeys(base, token, key, semaphore.limit, semaphore.permits) };
  return { name: 'mutex', names: () => base };
}
