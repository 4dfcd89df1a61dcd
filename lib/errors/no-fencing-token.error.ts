import { RedisLockError } from './redis-lock.error.js';

/**
 * A fencing token was needed from a lock taken with `fencing: false`, which has none: read
 * through `LockService.current()` (typed `Lock`, so the token cannot be `undefined` there), or
 * handed to `FencedRedis` as `undefined`. Take the lock without `fencing: false` where a token
 * is needed.
 *
 * @example
 * ```ts
 * await locks.using('report', async () => {
 *   locks.current()!.fencingToken; // NoFencingTokenError
 * }, { fencing: false });
 * ```
 */
export class NoFencingTokenError extends RedisLockError {
  constructor(
    /** The key of the lock, when known. */
    readonly key: string | undefined,
    message: string,
  ) {
    super(message);
  }
}
