import { RedisLockError } from './redis-lock.error.js';

/**
 * A semaphore was asked for with a `limit` other than the one it is in use with (by holders
 * or waiters anywhere): two limits for one key would let more callers in than either
 * expects. Thrown at once, without waiting.
 *
 * @example
 * ```ts
 * await locks.acquire('export', { limit: 3 });
 * await locks.acquire('export', { limit: 5 }); // SemaphoreLimitError: ... in use with limit 3
 * ```
 */
export class SemaphoreLimitError extends RedisLockError {
  constructor(
    /** The limit the semaphore is in use with. */
    readonly limitInUse: number,
    /** The limit this call gave. */
    readonly requestedLimit: number,
    message: string,
  ) {
    super(message);
  }
}
