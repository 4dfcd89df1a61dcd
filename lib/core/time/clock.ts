import { performance } from 'node:perf_hooks';
import { setLongTimeout } from './long-timeout.js';

/** A timer set on a `Clock`. */
export interface ClockTimer {
  cancel(): void;
  /**
   * Changes whether the timer lets the process exit, without arming it again. Optional: a
   * clock without it has its timers armed again for the time they have left.
   */
  setUnref?(unref: boolean): void;
}

/**
 * The time the lock engine runs on: every lease deadline, renewal tick, wait and retry is
 * measured and scheduled through one. The system clock in production; a manual one in tests
 * (`nestjs-redis-lock/testing`), which moves only when told to.
 */
export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Wall-clock milliseconds, for what outlives the process (a new fencing counter's start). */
  epochNow?(): number;
  /**
   * Calls `fn` after `ms` milliseconds, however long (Node's own timers overflow past 2^31 - 1
   * ms). An `unref` timer alone does not keep the process alive.
   */
  setTimer(fn: () => void, ms: number, unref?: boolean): ClockTimer;
  /**
   * Whether time moves only in steps that fire each timer at its own time (the testing module's
   * manual clock): no timer is ever late on it, so a watch for the event loop's stalls would tell
   * nothing there, and is not set on it.
   */
  readonly stepped?: boolean;
}

/**
 * Monotonic milliseconds. Lease deadlines must not move when the wall clock is adjusted
 * (NTP steps, manual changes), so every duration is measured with this.
 */
export function now(): number {
  return performance.now();
}

export const systemClock: Clock = {
  now,
  epochNow: () => Date.now(),
  setTimer(fn, ms, unref = false) {
    const timer = setLongTimeout(fn, ms, { unref });
    return { cancel: () => timer.clear(), setUnref: (next) => timer.setUnref(next) };
  },
};
