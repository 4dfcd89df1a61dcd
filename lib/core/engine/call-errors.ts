import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { LockKeyError } from '../../errors/lock-key.error.js';
import { UnsupportedLockKindError } from '../../errors/unsupported-lock-kind.error.js';
import { checkLockKey } from '../keys/lock-key.js';
import { quoteKey } from '../keys/quote-key.js';

/** The public lock calls whose bad keys and options are refused before anything is sent. */
export type LockCall = 'acquire' | 'tryAcquire' | 'using';

/**
 * How an error names the call it refuses: `acquire("order:1")`, `using("order:1", fn)`,
 * `tryAcquire(keys)`; `acquire(key)` when the key itself is what is wrong. The key is quoted and
 * cut as everywhere else it is shown: it comes from user input.
 */
export function describeCall(call: LockCall | 'isLocked' | 'inspect', key: unknown): string {
  if (Array.isArray(key)) return `${call}(keys)`;
  const shown = typeof key === 'string' && key.length > 0 ? quoteKey(key) : 'key';
  return call === 'using' ? `${call}(${shown}, fn)` : `${call}(${shown})`;
}

/**
 * A refusal of a call's key or options, saying which call it was given to (the module's and
 * `@Locked`'s say where theirs were given the same way). Other errors pass unchanged.
 */
export function namingCall(error: unknown, call: LockCall, key: unknown): unknown {
  if (error instanceof InvalidLockOptionsError && error.where === undefined) return error.within(describeCall(call, key));
  // The key is what is wrong: named as such, not shown again.
  if (error instanceof LockKeyError) return new LockKeyError(`${describeCall(call, Array.isArray(key) ? key : undefined)}: ${error.message}`);
  // A kind of lock the store cannot serve (a semaphore or a read lock in quorum mode): an option
  // of the call too, named as `@Locked`'s startup check names its method.
  if (error instanceof UnsupportedLockKindError) return new UnsupportedLockKindError(`${describeCall(call, key)}: ${error.message}`);
  return error;
}

/** `checkLockKey` for a method of one key that is not a lock call (`isLocked`, `inspect`). */
export function checkKeyOf(method: string, key: unknown): string {
  try {
    return checkLockKey(key);
  } catch (error) {
    throw new LockKeyError(`${method}(key): ${(error as Error).message}`);
  }
}
