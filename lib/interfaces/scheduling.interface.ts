import type { Duration } from '../core/time/duration.js';
import type { Lock } from './lock.interface.js';

/** Options of `@WithoutOverlapping()` and `@OnOneInstance()`. */
export interface JobLockOptions {
  /**
   * The lock key. Default `ClassName.methodName`. `@OnOneInstance()` holds its lease under
   * `<key>:owner`; on one method, both decorators use the same key.
   */
  key?: string;
  /**
   * Lease of the lock, renewed while held: milliseconds or a duration (`'30s'`, `'5m'`).
   * Default: the other decorator's ttl on the same method, else the module's ttl.
   */
  ttl?: Duration;
}

/** Options of `@LeaderElection()`. */
export interface LeaderElectionOptions {
  /**
   * Lease of the leadership, renewed by the leader every ttl/3; the others try to take it
   * every ttl/3. After a leader dies, another leads within about ttl + ttl/3. Milliseconds or
   * a duration (`'15s'`). Default: the module's ttl.
   */
  ttl?: Duration;
}

/**
 * Called on a `@LeaderElection` class when this instance becomes the leader. If it throws,
 * the instance steps down (and `onLeadershipLost` runs).
 *
 * @example
 * ```ts
 * onLeadershipAcquired(lock: Lock) {
 *   this.feed = openFeed({ signal: lock.signal, fencingToken: lock.fencingToken });
 * }
 * ```
 */
export interface OnLeadershipAcquired {
  onLeadershipAcquired(lock: Lock): void | Promise<void>;
}

/**
 * Called on a `@LeaderElection` class when this instance stops leading: the lease was lost
 * (`lock.signal` is then aborted with a `LockLostError`), the application is shutting down,
 * or `onLeadershipAcquired` threw.
 *
 * @example
 * ```ts
 * onLeadershipLost() {
 *   this.feed?.close();
 * }
 * ```
 */
export interface OnLeadershipLost {
  onLeadershipLost(lock: Lock): void | Promise<void>;
}
