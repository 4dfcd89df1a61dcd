import type { Duration } from '../core/time/duration.js';
import type { Observable } from 'rxjs';
import type { Lock } from './lock.interface.js';

/** Options of `@WithoutOverlapping()` and `@OnOneInstance()`. */
export interface JobLockOptions {
  /**
   * The lock key. Default `ClassName.methodName`, with the class of the provider (a subclass
   * that inherits the method has a key of its own), after the module's `jobNamespace` if one
   * is set. `@OnOneInstance()` holds its lease under `<key>:owner`; on one method, both
   * decorators use the same key. Used as written by every call, whatever its arguments: no
   * template, and one with a placeholder (`'sync:<0>'`) is refused when the class is defined
   * (for a lock per argument, `@Locked('sync:<0>', { onBusy: 'skip' })`).
   */
  key?: string;
  /**
   * Lease of the lock, renewed while held: milliseconds or a duration (`'30s'`, `'5m'`).
   * Default: the other decorator's ttl on the same method, else the module's ttl.
   */
  ttl?: Duration;
}

/**
 * A method `@WithoutOverlapping()` and `@OnOneInstance()` accept: one returning a Promise, an
 * Observable, or nothing. A call of the decorated method returns a Promise (resolving
 * `undefined` when skipped), or, for a method declared to return an Observable, an Observable
 * that takes the locks when subscribed; so a method typed to return anything else (`number`)
 * is refused at compile time rather than return a Promise its callers do not expect.
 */
export type JobMethod = (...args: any[]) => Promise<unknown> | Observable<unknown> | void;

/** The type of `@WithoutOverlapping()` and `@OnOneInstance()`: a method decorator for {@link JobMethod}s only. */
export type JobMethodDecorator = <T extends JobMethod>(target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<T>) => void;

/** The module options (of `RedisLockModule.forRoot()`) about scheduled jobs. */
export interface JobModuleOptions {
  /**
   * Joined to the default keys of `@WithoutOverlapping()` and `@OnOneInstance()`:
   * `<jobNamespace>:ClassName.methodName`, so that two applications sharing one Redis (and a
   * class and method name) do not exclude each other. Keys given explicitly are used as they
   * are. At most 64 characters, no braces.
   *
   * @example
   * ```ts
   * RedisLockModule.forRoot({ redis, jobNamespace: 'billing' }); // key "billing:InvoiceJobs.export"
   * ```
   */
  jobNamespace?: string;
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
 * the instance steps down (and `onLeadershipLost` runs). So it does if it returns an Observable
 * or a generator (from a class without `implements`, or JavaScript): the election awaits the
 * result and would never subscribe to it; return `lastValueFrom(...)`.
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
