import { abortableSleep } from './abortable-sleep.js';
import type { ReleaseWatch } from './release-notifier.js';
import { retryDelay } from './retry-delay.js';

/**
 * Sleeps until the next attempt: until a release names this waiter, or the holder's remaining
 * lease (`busyFor`, plus a little jitter) runs out, or `limit` passes, whichever comes first.
 * Without a release watch (Redis Cluster, or after a Redis error) it backs off exponentially.
 */
export async function waitForTurn(
  watch: ReleaseWatch | undefined,
  attempt: number,
  busyFor: number | undefined,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (watch === undefined) {
    await abortableSleep(Math.min(limit, retryDelay(attempt, busyFor)), signal);
    return;
  }
  // The holder's lease is an upper bound: if it crashed, nobody will publish a release.
  const leaseLeft = busyFor !== undefined && busyFor >= 0 ? busyFor + 1 + Math.random() * 5 : Infinity;
  const sleep = new AbortController();
  const sleepSignal = signal ? AbortSignal.any([signal, sleep.signal]) : sleep.signal;
  try {
    await Promise.race([watch.nextTurn(), abortableSleep(Math.min(limit, leaseLeft), sleepSignal)]);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw error;
  } finally {
    sleep.abort();
  }
  signal?.throwIfAborted();
}
