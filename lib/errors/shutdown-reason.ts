import { LockServiceClosedError } from './lock-service-closed.error.js';

/**
 * Internal (the package exports the class, not these): the reason every wait of a `LockService` ends with
 * when its application closes. A wait it ends rejects with a `LockNotAcquiredError` whose
 * `cause` is this error, so that a route's request gets 503, not a 500 and an error log.
 */
export function shutdownReason(): LockServiceClosedError {
  return shutDownRefusal('LockService shut down (the application is closing) while waiting for a lock.');
}

/** A call refused because `LockService` is shut down: the interceptor answers it 503 too. */
export function shutDownRefusal(message: string): LockServiceClosedError {
  return new LockServiceClosedError(message);
}

export function isShutdownReason(error: unknown): error is LockServiceClosedError {
  return error instanceof LockServiceClosedError;
}
