import type { FairnessOptions, FencingOptions, LockModeOptions, LockTimingOptions, SemaphoreOptions } from './redis-lock-options.interface.js';

/** Options of `@Locked`; timing options override the module's for this method. */
export interface LockedOptions extends LockTimingOptions, SemaphoreOptions, LockModeOptions, FairnessOptions, FencingOptions {
  /**
   * What happens when the lock stays busy for the whole `waitTimeout`:
   * - `'throw'` (default): the call fails with `LockNotAcquiredError` (HTTP 409 on a route);
   * - `'skip'`: the method does not run and the call resolves `undefined` (an Observable
   *   completes empty). Fits jobs that only one instance should run at a time.
   */
  onBusy?: 'throw' | 'skip';
}

/** Builds the lock key from the method's arguments. */
export type LockKeyFunction<A extends unknown[] = any[]> = (...args: A) => string;
