import { RedisLockError } from '../../errors/redis-lock.error.js';

const unanswered = new WeakSet<Error>();

/**
 * A read Redis did not answer within its bound (`LockManager.untilShutdown`): a `RedisLockError`
 * the lock board answers 503, as it answers a read the shutdown ended, not a 500 and an error
 * log per poll of an open tab.
 */
export function unansweredRead(message: string): RedisLockError {
  const error = new RedisLockError(message);
  unanswered.add(error);
  return error;
}

export function isUnansweredRead(error: unknown): boolean {
  return error instanceof Error && unanswered.has(error);
}
