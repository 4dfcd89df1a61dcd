import { RedisLockError } from './redis-lock.error.js';

const reasons = new WeakSet<Error>();

/**
 * Internal (not exported by the package): the reason every wait of a `LockService` ends with
 * when its application closes. A wait it ends rejects with a `LockNotAcquiredError` whose
 * `cause` is this error, so that a route's request gets 503, not a 500 and an error log.
 */
export function shutdownReason(): RedisLockError {
  return shutDownRefusal('LockService shut down (the application is closing) while waiting for a lock.');
}

/** A call refused because `LockService` is shut down: the interceptor answers it 503 too. */
export function shutDownRefusal(message: string): RedisLockError {
  const reason = new RedisLockError(message);
  reasons.add(reason);
  return reason;
}

export function isShutdownReason(error: unknown): boolean {
  return error instanceof Error && reasons.has(error);
}
