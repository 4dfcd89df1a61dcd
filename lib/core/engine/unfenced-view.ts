import { NoFencingTokenError } from '../../errors/no-fencing-token.error.js';
import { quoteKey } from '../keys/quote-key.js';
import type { Lock } from '../../interfaces/lock.interface.js';

/**
 * Each lock's view, made at its first `current()`: every call returns that one object, as it
 * returns the lock itself for a fenced lock, so that state a caller keeps per lock (a WeakMap, a
 * Set) finds it again. Weak: a released lock and its view go together.
 */
const views = new WeakMap<Lock, Lock>();

/**
 * `LockService.current()` is typed `Lock`, whose token is a number. For a lock taken with
 * `fencing: false` it returns this view instead: the same lock, whose `fencingToken` (and a
 * multi-key lock's `fencingTokens`) throws `NoFencingTokenError` when read, so that code that
 * needs a token fails where it reads one rather than passing `undefined` on.
 */
export function withoutToken(lock: Lock): Lock {
  let view = views.get(lock);
  if (view === undefined) views.set(lock, (view = new Proxy(lock, new TokenlessHandler())));
  return view;
}

type Method = (...args: unknown[]) => unknown;

class TokenlessHandler implements ProxyHandler<Lock> {
  /** Each method bound to the lock once: `view.release === view.release`, as on the lock itself. */
  private readonly bound = new Map<PropertyKey, { readonly method: Method; readonly bound: Method }>();

  get(target: Lock, property: PropertyKey): unknown {
    if (property === 'fencingToken' || property === 'fencingTokens') {
      throw new NoFencingTokenError(
        target.key,
        `Lock ${quoteKey(target.key)} was taken with fencing: false and has no fencing token; take it without that option where a token is needed.`,
      );
    }
    const value: unknown = Reflect.get(target, property, target);
    if (typeof value !== 'function') return value;
    // Bound to the lock, not the view: the engine knows the lock by its identity and its state.
    const known = this.bound.get(property);
    if (known?.method === value) return known.bound;
    const bound = (value as Method).bind(target);
    this.bound.set(property, { method: value as Method, bound });
    return bound;
  }
}
