import type { AnyLockOptions } from '../../interfaces/redis-lock-options.interface.js';

/**
 * When a call began, in ms since the epoch, carried to the keys of a multi-key call in their
 * options (a symbol: no option a user can give, and `Object.keys` never lists it): each key's
 * holder records it as its `since`, as the first key's does, however long the call waited on
 * the keys before it, and whatever clock the engine runs on (the testing store's manual one).
 */
const CALL_SINCE = Symbol('nestjs-redis-lock.callSince');

export function withCallSince(options: AnyLockOptions | undefined, since: number): AnyLockOptions {
  return { ...options, [CALL_SINCE]: since } as unknown as AnyLockOptions;
}

export function callSince(options: AnyLockOptions | undefined): number | undefined {
  return (options as { [CALL_SINCE]?: number } | undefined)?.[CALL_SINCE];
}
