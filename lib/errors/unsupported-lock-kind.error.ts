import { RedisLockError } from './redis-lock.error.js';

/**
 * The kind of lock asked for is not available on this store, e.g. a semaphore (`limit`) in
 * quorum mode, where a permit count cannot be kept consistent across independent masters.
 * Thrown at call time, before anything is written.
 *
 * @example
 * ```ts
 * RedisLockModule.forRoot({ redis: [url1, url2, url3] });
 * await locks.acquire('export', { limit: 3 }); // UnsupportedLockKindError
 * ```
 */
export class UnsupportedLockKindError extends RedisLockError {}
