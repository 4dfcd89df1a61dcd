import type { JobLockOptions, JobMethodDecorator } from '../interfaces/scheduling.interface.js';
import { jobLockDecorator } from './job-lock.wrapper.js';
import { checkFactoryCalled } from './decorator-call.js';

/**
 * The method runs on one instance of the application: the first instance to call it takes a
 * lease named `<key>:owner` and keeps renewing it, between calls too, for as long as it is up.
 * Calls on other instances resolve `undefined` without running (with a debug line and a
 * `skipped` event). When the owner dies, its lease expires after `ttl` and the next caller
 * anywhere takes over; when it shuts down cleanly, it aborts the signal of running calls (a
 * `shutdown` `LockLostError`), waits for them (at most `shutdownTimeout`) and hands the lease
 * back at once. An owner whose lease's local deadline passed (a blocked event loop) starts no
 * run on it.
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
  // `arguments`: the public signature takes one; more say it was applied uncalled.
  checkFactoryCalled('@OnOneInstance', Array.from(arguments), 1, '@OnOneInstance()');
  return jobLockDecorator('OnOneInstance', options);
}
