export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Waits for `promise` at most `ms` (then resolves `TIMED_OUT`) and no longer than `signal`
 * stays unaborted (then rejects with its reason). The promise itself is not cancelled.
 */
export function settleWithin<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | typeof TIMED_OUT> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = ms === Infinity ? undefined : setTimeout(() => finish(() => resolve(TIMED_OUT)), ms);
    const onAbort = (): void => finish(() => reject(signal!.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    function finish(settle: () => void): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    }
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
