import { performance } from 'node:perf_hooks';

/**
 * Monotonic milliseconds. Lease deadlines must not move when the wall clock is adjusted
 * (NTP steps, manual changes), so every duration is measured with this.
 */
export function now(): number {
  return performance.now();
}
