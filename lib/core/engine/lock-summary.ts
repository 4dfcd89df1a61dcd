import type { Lock, MultiKeyLock } from '../../interfaces/lock.interface.js';
import { shownKey } from '../keys/quote-key.js';
import { SHOWN_KEYS } from '../keys/shown-keys.js';

/**
 * What `JSON.stringify(lock)` gives: a lock refers to the engine that holds it, whose references
 * run in circles, and a JSON logger handed `{ lock }` threw on it. Its key as logs show keys
 * (escaped and cut); no `fencingToken` for a lock taken with `fencing: false`. Not its owner
 * token: the release and renew scripts take it as proof of ownership, so whoever reads the log
 * could release or extend the lock with it. Not when its lease ends: the deadline is on the
 * module's clock and moves at every renewal, so a time written down is stale a third of a lease on.
 */
export interface LockSummary {
  readonly key: string;
  readonly held: boolean;
  readonly fencingToken?: number;
}

/** `JSON.stringify()` of a multi-key lock: its first keys (see `SHOWN_KEYS`) and how many more. */
export interface MultiKeyLockSummary {
  readonly keys: string[];
  readonly moreKeys?: number;
  readonly held: boolean;
  readonly fencingTokens?: Record<string, number>;
}

/**
 * The key `util.inspect()` (`console.log`, Nest's ConsoleLogger) asks an object for how to print
 * it: a lock prints its summary, not the engine behind it with the owner token. Node's registered
 * symbol, so that no `node:util` is imported for it.
 */
export const INSPECT = Symbol.for('nodejs.util.inspect.custom');

export function lockSummary(lock: Lock): LockSummary {
  return { key: shownKey(lock.key), held: lock.held, fencingToken: lock.fencingToken };
}

export function multiKeyLockSummary(lock: MultiKeyLock): MultiKeyLockSummary {
  const keys = lock.keys.slice(0, SHOWN_KEYS);
  const tokens = lock.fencingTokens as MultiKeyLock['fencingTokens'] | undefined;
  return {
    keys: keys.map(shownKey),
    moreKeys: lock.keys.length > SHOWN_KEYS ? lock.keys.length - SHOWN_KEYS : undefined,
    held: lock.held,
    // Own properties (Object.fromEntries): a key named "__proto__" is shown like any other.
    fencingTokens: tokens === undefined ? undefined : Object.fromEntries(keys.map((key) => [shownKey(key), tokens[key]!])),
  };
}
