import { LockLostError } from '../../errors/lock-lost.error.js';
import { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import { isShutdownReason, shutdownReason } from '../../errors/shutdown-reason.js';

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

/**
 * Whether `error`, with which a wait begun within a chain ended, is a lock of that chain ending
 * (lost, stepped down from), given `ended`, the wait's signal: the call was told to stop, as its
 * own `signal` tells it, so its outcome is `aborted`. Shutdown's end stays `error` (the service
 * shut down), as for every other wait.
 */
export function endedWithChain(ended: AbortSignal | undefined, error: unknown): boolean {
  return ended?.aborted === true && error === ended.reason && !isShutdownReason(error);
}

/**
 * Whether `error`, a rejection of one key's acquisition, says a lock of the call's chain ended
 * its wait (see `endedWithChain`): the engine rejects such a wait with LockNotAcquiredError whose
 * `cause` is that lock's LockLostError (shutdown's end has a LockServiceClosedError instead).
 */
export function rejectedWithChain(error: unknown): boolean {
  return error instanceof LockNotAcquiredError && error.cause instanceof LockLostError;
}
