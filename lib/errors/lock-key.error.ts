import { RedisLockError } from './redis-lock.error.js';

/**
 * A lock key is unusable: not a string, empty, too long, or (for `@Locked`) a template whose
 * placeholder could not be filled from the method's arguments. Thrown before anything is
 * written to Redis.
 *
 * @example
 * ```ts
 * await locks.acquire(''); // throws LockKeyError: the key must not be empty
 * ```
 */
export class LockKeyError extends RedisLockError {}
