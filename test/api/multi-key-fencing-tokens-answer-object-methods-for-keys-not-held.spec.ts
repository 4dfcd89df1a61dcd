import { describe, expect, it } from 'vitest';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (forty-second session). A multi-key lock's `fencingTokens` was a plain object:
 * the keys it holds (`constructor`, `__proto__` included) read their tokens, but a key it does not
 * hold read what every object inherits: `fencingTokens['toString']` a function, not `undefined`,
 * and `'valueOf' in fencingTokens` true. Code that looks a key's token up (`tokens[key] ??
 * refuse()`, `key in tokens`, as FencedRedis' message tells it to use a key of the lock) took a
 * function for a token.
 */
describe.each(useBothStores())('fencingTokens of a multi-key lock ($label)', (backend) => {
  it('holds a token for each of its keys, "constructor" and "__proto__" included, and nothing for any other key', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire(['constructor', '__proto__']);
    const tokens = lock.fencingTokens;
    expect(Object.keys(tokens).sort()).toEqual(['__proto__', 'constructor']);
    expect(typeof tokens['constructor']).toBe('number');
    expect(typeof tokens['__proto__']).toBe('number');
    expect({ toString: tokens['toString'], valueOf: tokens['valueOf'], hasOwnProperty: tokens['hasOwnProperty'] }).toEqual({ toString: undefined, valueOf: undefined, hasOwnProperty: undefined });
    expect(['toString', 'valueOf', 'isPrototypeOf'].filter((key) => key in tokens)).toEqual([]);
    await lock.release();
  });

  it('reads no token for "constructor" from a lock that does not hold it', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire(['account:1', 'account:2']);
    expect(lock.fencingTokens['constructor']).toBeUndefined();
    expect(lock.fencingTokens['__proto__']).toBeUndefined();
    await lock.release();
  });
});
