import { LockLostError } from '../../errors/lock-lost.error.js';
import { shutdownReason } from '../../errors/shutdown-reason.js';

/** What a lock of a call chain offers a wait begun within it. */
interface ChainLock {
  readonly signal: AbortSignal;
  readonly released: boolean;
}

/**
 * Aborts `ended` (a call's wait for its lock) when a lock of the chain it waits within ends while
 * it waits: lost, a leader stepping down, shutdown telling it. The code that would run under the
 * awaited lock was told to stop by that lock's signal, and the call could not hear it: once the
 * lock came, its work ran anyway (a job's after its run lock was lost, a term's after the step-down).
 * A lock that had ended before the wait began is left out: the chain chose to go on without it.
 * Returns the function that stops following.
 */
export function endWaitWithChain(chain: readonly ChainLock[], ended: AbortController): () => void {
  const signals = new Set(chain.filter((lock) => !lock.released && !lock.signal.aborted).map((lock) => lock.signal));
  const onEnd = (event: Event): void => ended.abort(waitEndedBy((event.target as AbortSignal).reason));
  for (const signal of signals) signal.addEventListener('abort', onEnd, { once: true });
  return () => {
    for (const signal of signals) signal.removeEventListener('abort', onEnd);
  };
}

/**
 * Shutdown's end of a lock ends the wait as shutdown ends every wait (the call rejects "the
 * application is closing"); any other end is the call's `cause` as it is (see LockNotAcquiredError).
 */
function waitEndedBy(reason: unknown): unknown {
  return reason instanceof LockLostError && reason.reason === 'shutdown' ? shutdownReason() : reason;
}
