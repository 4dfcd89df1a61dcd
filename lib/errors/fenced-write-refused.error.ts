import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from './redis-lock.error.js';

/**
 * A fenced write was refused: the resource has already accepted a higher fencing token, so a
 * newer holder of the lock has claimed it (a read for update) or written it since this holder
 * took the lock. This holder lost its lock (it was paused past its lease, or its renewals
 * failed) and must not write; nothing was written. A read for update (`FencedRedis.get(key, fencingToken)`, or a
 * claiming SQL read) is refused the same way, with `operation` `'read'`: a newer holder claimed
 * or wrote the resource, and nothing was read.
 *
 * @example
 * ```ts
 * try {
 *   await fenced.set(`balance:${id}`, String(balance), lock.fencingToken);
 * } catch (err) {
 *   if (err instanceof FencedWriteRefusedError) return; // a newer holder owns the balance now
 *   throw err;
 * }
 * ```
 */
export class FencedWriteRefusedError extends RedisLockError {
  constructor(
    /** The resource written to (a Redis key, or a row as the caller names it). */
    readonly key: string,
    /** The fencing token this write carried. */
    readonly fencingToken: number,
    /** The highest fencing token the resource has accepted, higher than `fencingToken`. */
    readonly highestToken: number,
    /** What was refused: a write, or a read for update (a claim). */
    readonly operation: 'write' | 'read' = 'write',
  ) {
    super(
      operation === 'read'
        ? `Fenced read of ${quoteKey(key)} refused: its fencing token ${fencingToken} is lower than ${highestToken}, ` +
            'the highest this resource has accepted. A newer holder of the lock has claimed or written it: this holder lost its lock and must not write.'
        : `Fenced write to ${quoteKey(key)} refused: its fencing token ${fencingToken} is lower than ${highestToken}, ` +
            'the highest this resource has accepted. A newer holder of the lock has claimed or written it: this holder lost its lock and must not write.',
    );
  }
}
