import { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';

/**
 * What a call for `key` that shutdown ended (its wait, its attempt in flight, its wait for this
 * process' parking release) rejects with: not acquired, because the application is closing, with
 * the engine's error as `cause`, so that a route answers 503, not a 500 and an error log. The
 * caller's own abort, and an error that says not acquired already, pass as they are.
 */
export function endedByShutdown(closed: boolean, key: string, waitedMs: number, error: unknown, signal?: AbortSignal): unknown {
  if (!closed || error instanceof LockNotAcquiredError || (signal?.aborted === true && error === signal.reason)) return error;
  return new LockNotAcquiredError(key, waitedMs, { cause: error });
}
