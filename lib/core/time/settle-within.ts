import { systemClock, type Clock } from './clock.js';
import { setImmediate } from './real-timers.js';

export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Waits for `promise` at most `ms` (then resolves `TIMED_OUT`) and no longer than each of
 * `signals` stays unaborted (then rejects with the reason of the first aborted). The promise
 * itself is not cancelled. Time is up after the event loop's next poll for I/O, not when the
 * timer runs: timers run before the loop reads its sockets, so after a stall (a long GC pause,
 * a busy CPU) a reply that came in during it would otherwise count as missing.
 */
export function settleWithin<T>(
  promise: Promise<T>,
  ms: number,
  signals: readonly (AbortSignal | undefined)[] = [],
  clock: Clock = systemClock,
): Promise<T | typeof TIMED_OUT> {
  const aborted = signals.find((signal) => signal?.aborted);
  if (aborted) return Promise.reject(aborted.reason);
  return new Promise((resolve, reject) => {
    const timer = ms === Infinity ? undefined : clock.setTimer(() => setImmediate(() => finish(() => resolve(TIMED_OUT))), ms);
    const listeners = signals.map((signal) => {
      const onAbort = (): void => finish(() => reject(signal!.reason));
      signal?.addEventListener('abort', onAbort, { once: true });
      return onAbort;
    });
    function finish(settle: () => void): void {
      timer?.cancel();
      signals.forEach((signal, i) => signal?.removeEventListener('abort', listeners[i]!));
      settle();
    }
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
