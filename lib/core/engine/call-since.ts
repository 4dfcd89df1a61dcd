import type { AnyLockOptions } from '../../interfaces/redis-lock-options.interface.js';

/**
 * When a call began, in ms since the epoch, carried to the keys of a multi-key call in their
 * options (a symbol: no option a user can give, and `Object.keys` never lists it): each key's
 * holder records it as its `since`, as the first key's does, however long the call waited on
 * the keys before it, and whatever clock the engine runs on (the testing store's manual one).
 */
const CALL_SINCE = Symbol('nestjs-redis-lock.callSince');

export function withCallSince(options: AnyLockOptions | undefined, since: number, keys?: readonly string[]): AnyLockOptions {
  // A copy, frozen: it reaches every listener of the keys' events.
  return { ...options, [CALL_SINCE]: since, [PART_OF]: keys && Object.freeze([...keys]) } as unknown as AnyLockOptions;
}

/**
 * The keys of the multi-key lock a key is taken for, carried in its options as `CALL_SINCE` is:
 * its events say so (`keys`), and the lock metrics count the whole lock once, not each key.
 */
const PART_OF = Symbol('nestjs-redis-lock.partOf');

export function partOf(options: AnyLockOptions | undefined): readonly string[] | undefined {
  return (options as { [PART_OF]?: readonly string[] } | undefined)?.[PART_OF];
}

export function callSince(options: AnyLockOptions | undefined): number | undefined {
  return (options as { [CALL_SINCE]?: number } | undefined)?.[CALL_SINCE];
}
