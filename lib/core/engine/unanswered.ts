import { RedisUnansweredError } from '../../errors/redis-unanswered.error.js';

/**
 * A read (`LockManager.untilShutdown`) or an attempt (`tryAcquire()`) Redis did not answer within
 * its bound: a `RedisLockError` that the lock board and `LockConflictInterceptor` answer 503, as a
 * wait Redis left unanswered is answered, not a 500 and an error log per request (or per poll of
 * an open board tab).
 */
export function unansweredRead(message: string): RedisUnansweredError {
  return new RedisUnansweredError(message);
}

export function isUnansweredRead(error: unknown): error is RedisUnansweredError {
  return error instanceof RedisUnansweredError;
}
