import { NoFencingTokenError } from '../../errors/no-fencing-token.error.js';
import { quoteKey } from '../keys/quote-key.js';
import type { Lock } from '../../interfaces/lock.interface.js';

/**
 * `LockService.current()` is typed `Lock`, whose token is a number. For a lock taken with
 * `fencing: false` it returns this view instead: the same lock, whose `fencingToken` (and a
 * multi-key lock's `fencingTokens`) throws `NoFencingTokenError` when read, so that code that
 * needs a token fails where it reads one rather than passing `undefined` on.
 */
export function withoutToken(lock: Lock): Lock {
  return new Proxy(lock, {
    get(target, property) {
      if (property === 'fencingToken' || property === 'fencingTokens') {
        throw new NoFencingTokenError(
          target.key,
          `Lock ${quoteKey(target.key)} was taken with fencing: false and has no fencing token; take it without that option where a token is needed.`,
        );
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
