import { RedisLockError } from './redis-lock.error.js';

/**
 * `LockService` is shut down, or shutting down (the application is closing): a call made then is
 * refused with it, and a wait that shutdown ended rejects with a `LockNotAcquiredError` whose
 * `cause` it is. Nothing was taken. `LockConflictInterceptor` answers it 503 (a retry belongs on
 * another instance).
 *
 * @example
 * ```ts
 * try {
 *   await locks.using('invoice:42', () => charge());
 * } catch (error) {
 *   if (error instanceof LockNotAcquiredError && error.cause instanceof LockServiceClosedError) return; // closing: leave it to the next instance
 *   throw error;
 * }
 * ```
 */
export class LockServiceClosedError extends RedisLockError {}
