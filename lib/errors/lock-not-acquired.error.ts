import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from './redis-lock.error.js';

/**
 * The lock could not be acquired within `waitTimeout`: another holder kept it, or Redis could
 * not be reached (then `cause` holds the last Redis error).
 *
 * @example
 * ```ts
 * try {
 *   await locks.using(`order:${id}`, () => ship(id), { waitTimeout: 0 });
 * } catch (err) {
 *   if (err instanceof LockNotAcquiredError) return 'busy, try again later';
 *   throw err;
 * }
 * ```
 */
export class LockNotAcquiredError extends RedisLockError {
  constructor(
    /** The lock key as the caller gave it (without the prefix). */
    readonly key: string,
    /** How long the caller waited, in milliseconds. */
    readonly waitedMs: number,
    options?: ErrorOptions,
  ) {
    const why =
      options?.cause instanceof Error
        ? `Redis did not answer (${options.cause.message})`
        : 'another holder kept it';
    super(
      `Lock ${quoteKey(key)} was not acquired within ${Math.round(waitedMs)} ms: ${why}. ` +
        'Raise waitTimeout to wait longer, or handle LockNotAcquiredError as "busy".',
      options,
    );
  }
}
