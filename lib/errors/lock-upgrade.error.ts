import { RedisLockError } from './redis-lock.error.js';

/**
 * A call chain that holds the read lock of a key asked for its write lock (an upgrade). Two
 * readers upgrading at once would each wait for the other forever, so it fails at once
 * instead: release the read lock and take the write lock, or take the write lock from the
 * start (a write holder may take the read lock of the same key).
 *
 * @example
 * ```ts
 * await locks.using('doc:1', async () => {
 *   await locks.acquire('doc:1'); // LockUpgradeError: the chain holds the read lock
 * }, { mode: 'read' });
 * ```
 */
export class LockUpgradeError extends RedisLockError {
  constructor(
    /** The key whose read lock the chain holds. */
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}
