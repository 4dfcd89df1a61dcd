import type { JobLockOptions, JobMethodDecorator } from '../interfaces/scheduling.interface.js';
import { jobLockDecorator } from './job-lock.wrapper.js';
import { checkFactoryCalled } from './decorator-call.js';

/**
 * The method never runs twice at once, on any instance: a call that finds the run lock held
 * (here or elsewhere) resolves `undefined` without running, and logs a debug line saying why.
 * The run holds the lock, renewed, for its whole duration; inside it `LockService.current()`
 * returns the lock (its `signal`, its `fencingToken`).
 *
 * Works with `@Cron()`, `@Interval()` and `@Timeout()` of `@nestjs/schedule` in either order,
 * and when the method is called directly. The method returns a Promise, an Observable or
 * nothing (other return types do not compile); a call returns a Promise, or for a method
 * declared to return an Observable, an Observable that takes the lock when subscribed and holds
 * it until the stream ends. A skipped call emits a `skipped` event (see `LockService.events$`).
 * The default key is `ClassName.methodName` of the provider's class (after the module's
 * `jobNamespace`).
 *
 * @example
 * ```ts
 * @Cron('0 * * * * *')
 * @WithoutOverlapping({ ttl: '30s' })
 * async reconcileStock() {
 *   const { signal, fencingToken } = this.locks.current()!;
 *   await this.warehouse.count({ signal, fencingToken });
 * }
 * ```
 */
export function WithoutOverlapping(options?: JobLockOptions): JobMethodDecorator {
  // `arguments`: the public signature takes one; more say it was applied uncalled.
  checkFactoryCalled('@WithoutOverlapping', Array.from(arguments), 1, '@WithoutOverlapping()');
  return jobLockDecorator('WithoutOverlapping', options);
}
