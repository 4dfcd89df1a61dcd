import { LockKeyError } from '../../errors/lock-key.error.js';
import { checkLockKey } from '../keys/lock-key.js';

/** The most keys one multi-key lock may take: each is a lock of its own, taken one after another. */
export const MAX_KEYS = 1_000;

/**
 * Checks the keys of a multi-key lock and puts them in the one order every caller takes them
 * in (UTF-16 code unit order, as `Array.prototype.sort` compares strings), without duplicates.
 * Taking locks in one global order is what rules out deadlocks: no caller ever waits for a key
 * that sorts before one it holds, so waits cannot form a cycle.
 */
export function canonicalKeys(keys: unknown, method: string): string[] {
  if (!Array.isArray(keys)) throw new LockKeyError(`${method}(keys): keys must be an array of strings, got ${typeof keys}.`);
  if (keys.length === 0) throw new LockKeyError(`${method}(keys): keys must name at least one lock, got an empty array.`);
  if (keys.length > MAX_KEYS) throw new LockKeyError(`${method}(keys): at most ${MAX_KEYS} keys can be locked together, got ${keys.length}.`);
  // A loop, not map(): map() skips the holes of a sparse array, which would pass unchecked.
  const checked: string[] = [];
  // A bad element is refused as the call made, as a bad list is.
  try {
    for (let i = 0; i < keys.length; i++) checked.push(checkLockKey(keys[i], `key keys[${i}]`));
  } catch (error) {
    throw new LockKeyError(`${method}(keys): ${(error as Error).message}`);
  }
  return [...new Set(checked)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
