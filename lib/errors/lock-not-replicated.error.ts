import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from './redis-lock.error.js';

/**
 * With the module option `waitForReplicas`, an acquisition reached fewer replicas than asked
 * within its `timeout` (a replica down, lagging or cut off). The lock was given back, and the
 * attempt is retried like any Redis error until `waitTimeout`; the caller then gets
 * `LockNotAcquiredError` with this error as its `cause`.
 *
 * @example
 * ```ts
 * try {
 *   await locks.using('payout', () => pay(), { waitTimeout: 0 });
 * } catch (err) {
 *   if (err instanceof LockNotAcquiredError && err.cause instanceof LockNotReplicatedError) {
 *     // replication is behind: check INFO replication on the master
 *   }
 *   throw err;
 * }
 * ```
 */
export class LockNotReplicatedError extends RedisLockError {
  constructor(
    /** The lock key as Redis names it (with the prefix). */
    readonly key: string,
    /** Replicas that confirmed the acquisition. */
    readonly reached: number,
    /** Replicas `waitForReplicas` asked for. */
    readonly replicas: number,
    /** Milliseconds WAIT blocked. */
    readonly timeout: number,
  ) {
    super(
      `Lock ${quoteKey(key)} reached ${reached} of ${replicas} replica${replicas === 1 ? '' : 's'} within ${timeout} ms (waitForReplicas), so it was given back. ` +
        'Check the replicas (INFO replication on the master), or raise waitForReplicas.timeout.',
    );
  }
}
