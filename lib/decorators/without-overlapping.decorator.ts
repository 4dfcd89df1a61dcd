import type { JobLockOptions, JobMethodDecorator } from '../interfaces/scheduling.interface.js';
import { jobLockDecorator } from './job-lock.wrapper.js';

/**
 * The method never runs twice at once, on any instance: a call that finds the run lock held
 * (here or elsewhere) resolves `undefined` without running, and logs a debug line saying why.
 * The run holds the lock, renewed, for its whole duration; inside it `LockService.current()`
 * returns the lock (its `signal`, its `fencingToken`).
 *
 * Works with `@Cron()`, `@Interval()` and `@Timeout()` of `@nestjs/schedule` in either order,
 * and when the method is called directly. The method returns a Promise.
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
  return jobLockDecorator('WithoutOverlapping', options);
}
