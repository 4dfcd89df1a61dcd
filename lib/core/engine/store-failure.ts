import { RedisLockError } from '../../errors/redis-lock.error.js';

/**
 * Whether Redis refused a script because a key it touched holds data of another kind than the
 * script keeps there (a hash where a lock's string is, a word where a fencing counter is):
 * something other than this library writes under its key prefix, and asking again changes nothing.
 * Redis 7 starts the reply with the command's error; Redis 6 wraps it in "Error running script".
 */
export function holdsForeignData(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /\bWRONGTYPE\b|value is not an integer or out of range/.test(message);
}

/**
 * A store's rejection as the library's error, so that one `instanceof RedisLockError` tells lock
 * trouble from the caller's own: the library's errors pass as they are; a client's (a connection
 * closed, a command refused) is named by `call`, `then` said after it, and kept as the `cause`.
 */
export function storeFailure(error: unknown, call: string, then = ''): RedisLockError {
  if (error instanceof RedisLockError) return error;
  const reason = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
  if (holdsForeignData(error)) {
    return new RedisLockError(
      `${call}: Redis refused it (${reason}): a key of the lock holds data this library did not write, so something else writes under its key prefix; delete that key, or give the module a keyPrefix of its own${then}.`,
      { cause: error },
    );
  }
  return new RedisLockError(`${call}: Redis could not be asked (${reason})${then}.`, { cause: error });
}
