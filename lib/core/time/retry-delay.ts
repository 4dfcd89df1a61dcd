const FIRST_DELAY_MS = 5;
const MAX_DELAY_MS = 100;

/**
 * How long to sleep before the next attempt on a busy lock: exponential from 5 ms to 100 ms,
 * never past the holder's remaining lease (`busyFor`, the PTTL the failed attempt returned),
 * with full jitter in the upper half so that waiters spread out instead of retrying together.
 */
export function retryDelay(attempt: number, busyFor: number | undefined): number {
  let delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt, 10));
  if (busyFor !== undefined && busyFor >= 0) delay = Math.min(delay, busyFor + 1);
  return Math.max(1, Math.round(delay * (0.5 + Math.random() * 0.5)));
}
