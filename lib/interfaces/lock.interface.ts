import type { Duration } from '../core/time/duration.js';
/**
 * A held lock. Returned by `LockService.acquire()` / `tryAcquire()`, passed to the function of
 * `LockService.using()`, and available as `LockService.current()` inside that function or a
 * `@Locked` method.
 *
 * A lock is `AsyncDisposable`: declared with `await using`, it is released when the scope
 * ends, however it ends (a nested, reentrant handle then releases nothing in Redis).
 *
 * `JSON.stringify(lock)` (a JSON logger handed `{ lock }`) gives `{ key, held, fencingToken }`, a
 * multi-key lock `{ keys, moreKeys?, held, fencingTokens }` (its first three keys): keys escaped
 * and cut as in messages, and never the owner token, which would let a reader of the log release
 * or extend the lock.
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
   * holder that lost the lock while paused. On Redis a key's first token is the server's clock
   * in milliseconds (so that a counter Redis lost starts again above the old one's tokens), not
   * 1; the in-memory store's is the wall clock's (`Date.now()`) likewise, also on a `ManualClock`,
   * which does not move the wall clock; quorum mode's counters start at the acquiring instance's
   * clock. A safe integer, which a SQL `bigint` holds.
   */
  readonly fencingToken: number;
  /**
   * Aborted, with a `LockLostError` as its reason, the moment the lock is known or presumed
   * lost. Never aborted by a normal `release()`. After the event loop was held up past the
   * lease (a GC pause, CPU-bound code, a frozen process) it aborts when the deadline timer runs,
   * or as soon as `held` is read.
   */
  readonly signal: AbortSignal;
  /**
   * Whether the lock is still held: not released and not lost. Reading it checks the lease's
   * local deadline, so right after a stall it is already `false` (and `signal` aborted), before
   * any timer has run.
   */
  readonly held: boolean;
  /**
   * Renews the lease now. With `ttl` (milliseconds or a duration string such as `'5m'`), the
   * lease becomes that long from now on (the watchdog keeps renewing with it). Rejects with
   * `LockLostError` if Redis no longer holds the lock for this owner, and with
   * `InvalidLockOptionsError` (option `ttl`) for a `ttl` above the module's `fenceRetention`,
   * since such a lease could outlive the key's fencing counter.
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

/**
 * A held lock taken with `fencing: false`: a {@link Lock} without a fencing token. Its
 * `fencingToken` is `undefined`, so that code written for a token (a `FencedRedis` write, a
 * token column) does not compile against it, and `FencedRedis` refuses it at run time.
 *
 * @example
 * ```ts
 * const lock = await locks.acquire(`report:${day}`, { fencing: false });
 * lock.fencingToken; // undefined, typed `undefined`
 * await lock.release();
 * ```
 */
export interface UnfencedLock extends Omit<Lock, 'fencingToken'> {
  /** Always `undefined`: the lock was taken with `fencing: false`. */
  readonly fencingToken: undefined;
}

/** Locks on several keys taken with `fencing: false`: a {@link MultiKeyLock} without fencing tokens. */
export interface UnfencedMultiKeyLock extends Omit<MultiKeyLock, 'fencingToken' | 'fencingTokens'> {
  /** Always `undefined`: the locks were taken with `fencing: false`. */
  readonly fencingToken: undefined;
  /** Always `undefined`: the locks were taken with `fencing: false`. */
  readonly fencingTokens: undefined;
}

/**
 * Locks on several keys held as one, from `acquire([...keys])`, `using([...keys], fn)` or
 * `@Locked([...templates])`: all keys were acquired, or none is held. Keys are taken one at a
 * time in one canonical order (sorted), whatever order the caller names them in, so two
 * callers locking overlapping keys never deadlock; what was taken is given back when the wait
 * runs out. Each key is a lock of its own, so keys in different Redis Cluster slots work.
 *
 * @example
 * ```ts
 * await locks.using([`account:${from}`, `account:${to}`], async (lock) => {
 *   await ledger.transfer(from, to, amount, { fencingTokens: lock.fencingTokens });
 * });
 * ```
 */
export interface MultiKeyLock extends Lock {
  /** The keys, in canonical (sorted) order, without duplicates. */
  readonly keys: readonly string[];
  /** `key`: the first key in canonical order. `fencingToken` is that key's token. */
  readonly key: string;
  /**
   * Each key's fencing token, in an object without a prototype: a key the lock does not hold
   * reads `undefined` (`toString` and `constructor` too).
   */
  readonly fencingTokens: Readonly<Record<string, number>>;
  /** Aborted as soon as any of the keys is lost, with that key's `LockLostError`. */
  readonly signal: AbortSignal;
}
