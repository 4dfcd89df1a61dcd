import { RedisLockError } from '../../errors/redis-lock.error.js';

const unanswered = new WeakSet<Error>();

/**
 * A read (`LockManager.untilShutdown`) or an attempt (`tryAcquire()`) Redis did not answer within
 * its bound: a `RedisLockError` that the lock board and `LockConflictInterceptor` answer 503, as a
 * wait Redis left unanswered is answered, not a 500 and an error log per request (or per poll of
 * an open board tab).
 */
export function unansweredRead(message: string): RedisLockError {
  const error = new RedisLockError(message);
  unanswered.add(error);
  return error;
}

export function isUnansweredRead(error: unknown): boolean {
  return error instanceof Error && unanswered.has(error);
}
