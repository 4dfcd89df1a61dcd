import { RedisLockError } from '../../errors/redis-lock.error.js';

/**
 * A store's rejection as the library's error, so that one `instanceof RedisLockError` tells lock
 * trouble from the caller's own: the library's errors pass as they are; a client's (a connection
 * closed, a command refused) is named by `call`, `then` said after it, and kept as the `cause`.
 */
export function storeFailure(error: unknown, call: string, then = ''): RedisLockError {
  if (error instanceof RedisLockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new RedisLockError(`${call}: Redis could not be asked (${reason.replace(/\.$/, '')})${then}.`, { cause: error });
}
