import { systemClock, type Clock } from './clock.js';

/**
 * Resolves after `ms`, or rejects with `signal.reason` as soon as the signal aborts. Unlike
 * `timers/promises`, it rejects with the caller's own reason rather than a generic AbortError,
 * and it leaves no timer or listener behind either way.
 */
export function abortableSleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(signal!.reason);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
