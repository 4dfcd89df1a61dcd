import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { parseDuration } from '../time/duration.js';

/** The shortest retention accepted: anything shorter is surely a unit mistake (seconds for ms). */
export const MIN_FENCE_RETENTION_MS = 60_000;
/** Ten years: PEXPIRE takes more, but a longer retention is the same as none. */
export const MAX_FENCE_RETENTION_MS = 10 * 365 * 24 * 3_600_000;

/**
 * Checks the module's `fenceRetention` option: `undefined` (counters are kept forever) or an
 * duration (milliseconds or a string such as `'30d'`), at least the module's `ttl` and a minute.
 * Returns 0 for "kept forever".
 */
export function resolveFenceRetention(value: unknown, ttl: number): number {
  if (value === undefined) return 0;
  const min = Math.max(MIN_FENCE_RETENTION_MS, ttl);
  return parseDuration(value, 'fenceRetention', min, MAX_FENCE_RETENTION_MS, ' (at least a minute and at least the ttl; leave it out to keep fencing counters forever)');
}

/**
 * Checks a call's own `ttl` (`given`, as the caller wrote it; `ttl` in ms) against the module's
 * `fenceRetention` (ms, 0 for none): a lease longer than the retention could outlive its key's
 * fencing counter, and the next holder's tokens would come from a new counter while it still acts
 * (started at the clock, below its token if the old one outran the clock).
 * Throws `InvalidLockOptionsError` naming both options.
 */
export function checkTtlWithinRetention(ttl: number, given: unknown, fenceRetention: number): void {
  if (fenceRetention > 0 && ttl > fenceRetention) {
    throw new InvalidLockOptionsError(
      'ttl',
      given,
      `at most the module's fenceRetention (${fenceRetention} ms): a fencing counter must outlive every lease of its key (raise fenceRetention, or leave it out to keep counters forever)`,
    );
  }
}
