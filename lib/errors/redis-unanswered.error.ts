import { RedisUnavailableError } from './redis-unavailable.error.js';

/**
 * Redis did not answer a call within the bound the library gives it (an attempt's 1 s grace):
 * `isLocked()`, `inspect()` and `tryAcquire()` reject with it, and a waiting call's last attempt
 * makes it the `cause` of the `LockNotAcquiredError` it ends with. `release()` rejects with it when
 * Redis has not answered by the end of the lease, or of the application's shutdown (the lease
 * then ends on its own in Redis). Redis is frozen, overloaded, or
 * cut off by a network fault that resets nothing; the call's command may still run there later.
 * `LockConflictInterceptor` answers it 503 with `Retry-After`, as every `RedisUnavailableError`, of
 * which it is a kind. Its message names the call and key.
 *
 * @example
 * ```ts
 * try {
 *   return await locks.isLocked('report');
 * } catch (error) {
 *   if (error instanceof RedisUnansweredError) return undefined; // unknown for now: Redis is not answering
 *   throw error;
 * }
 * ```
 */
export class RedisUnansweredError extends RedisUnavailableError {}
