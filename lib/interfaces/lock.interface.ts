import type { Duration } from '../core/duration.js';
/**
 * A held lock. Returned by `LockService.acquire()` / `tryAcquire()`, passed to the function of
 * `LockService.using()`, and available as `LockService.current()` inside that function or a
 * `@Locked` method.
 *
 * A lock is `AsyncDisposable`: declared with `await using`, it is released when the scope
 * ends, however it ends (a nested, reentrant handle then releases nothing in Redis).
 *
 * @example
 * ```ts
 * {
 *   await using lock = await locks.acquire(`invoice:${id}`);
 *   await storage.write(invoice, { fencingToken: lock.fencingToken, signal: lock.signal });
 * } // released here
 *
 * // or by hand:
 * const lock = await locks.acquire(`invoice:${id}`);
 * try {
 *   await storage.write(invoice, { fencingToken: lock.fencingToken, signal: lock.signal });
 * } finally {
 *   await lock.release();
 * }
 * ```
 */
export interface Lock extends AsyncDisposable {
  /** The key as given by the caller (without the prefix). */
  readonly key: string;
  /**
   * A number that strictly increases with every acquisition of this key, across releases and
   * lease expiries. Pass it to the protected resource so that it can refuse writes from a
   * holder that lost the lock while paused.
   */
  readonly fencingToken: number;
  /**
   * Aborted, with a `LockLostError` as its reason, the moment the lock is known or presumed
   * lost. Never aborted by a normal `release()`.
   */
  readonly signal: AbortSignal;
  /** Whether the lock is still held: not released and not lost. */
  readonly held: boolean;
  /**
   * Renews the lease now. With `ttl` (milliseconds or a duration string such as `'5m'`), the
   * lease becomes that long from now on (the watchdog keeps renewing with it). Rejects with
   * `LockLostError` if Redis no longer holds the lock for this owner.
   */
  extend(ttl?: Duration): Promise<void>;
  /**
   * Releases the lock: stops the watchdog and deletes the key in Redis only if this owner
   * still holds it. Idempotent; calling it on a lost lock never touches another owner's lock.
   * A nested (reentrant) handle releases nothing in Redis: the outermost holder does.
   */
  release(): Promise<void>;
  /** The same as `release()`: what `await using` calls at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}
