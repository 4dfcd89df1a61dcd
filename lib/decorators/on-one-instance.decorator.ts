import type { JobLockOptions, JobMethodDecorator } from '../interfaces/scheduling.interface.js';
import { jobLockDecorator } from './job-lock.wrapper.js';

/**
 * The method runs on one instance of the application: the first instance to call it takes a
 * lease named `<key>:owner` and keeps renewing it, between calls too, for as long as it is up.
 * Calls on other instances resolve `undefined` without running (with a debug line). When the
 * owner dies, its lease expires after `ttl` and the next caller anywhere takes over; when it
 * shuts down cleanly, it lets running calls finish and hands the lease back at once.
 *
 * Add `@WithoutOverlapping()` too, and runs never overlap either (both use the same key).
 *
 * @example
 * ```ts
 * @Cron('0 0 2 * * *')
 * @OnOneInstance({ ttl: '1m' })
 * @WithoutOverlapping()
 * async exportInvoices() { ... }
 * ```
 */
export function OnOneInstance(options?: JobLockOptions): JobMethodDecorator {
  return jobLockDecorator('OnOneInstance', options);
}
