import type { Clock } from '../time/clock.js';
import { abortableSleep } from '../time/abortable-sleep.js';
import type { ReleaseWatch } from '../stores/redis/release-notifier.js';
import { retryDelay } from '../time/retry-delay.js';

/**
 * Sleeps until the next attempt: until a release hands the lock to this waiter (then resolves
 * its fencing token), or the holder's remaining lease (`busyFor`, plus a little jitter) runs
 * out, or `limit` passes, whichever comes first. Without a release watch (Redis Cluster, or
 * after a Redis error) it backs off exponentially.
 */
export function waitForTurn(
  watch: ReleaseWatch | undefined,
  attempt: number,
  busyFor: number | undefined,
  limit: number,
  signal: AbortSignal | undefined,
  /** Aborted at shutdown: ends every wait with its reason. */
  shutdown: AbortSignal,
  clock: Clock,
): Promise<number | undefined> {
  if (shutdown.aborted) return Promise.reject(shutdown.reason);
  if (watch === undefined) {
    return abortableSleep(Math.min(limit, retryDelay(attempt, busyFor)), signal, clock).then(() => {
      shutdown.throwIfAborted();
      return undefined;
    });
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  const granted = watch.takeGrant();
  if (granted !== undefined) return Promise.resolve(granted);
  // The holder's lease is an upper bound: if it crashed, nobody will publish a release.
  const leaseLeft = busyFor !== undefined && busyFor >= 0 ? busyFor + 1 + Math.random() * 5 : Infinity;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (settle: () => void): void => {
      if (done) return;
      done = true;
      // A grant that comes after this wait ended is kept for the next one.
      stopListening();
      timer.cancel();
      signal?.removeEventListener('abort', onAbort);
      shutdown.removeEventListener('abort', onShutdown);
      settle();
    };
    const onAbort = (): void => finish(() => reject(signal!.reason));
    const onShutdown = (): void => finish(() => reject(shutdown.reason));
    const timer = clock.setTimer(() => finish(() => resolve(undefined)), Math.min(limit, leaseLeft));
    signal?.addEventListener('abort', onAbort, { once: true });
    shutdown.addEventListener('abort', onShutdown, { once: true });
    const stopListening = watch.onGrant((fencingToken) => finish(() => resolve(fencingToken)));
  });
}
