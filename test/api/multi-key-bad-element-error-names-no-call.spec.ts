import { describe, expect, it } from 'vitest';
import { LockKeyError, type LockService } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (thirty-fourth session): a key list is refused before any key is taken, and a
 * list that is empty, too long or no array says which call it was given to (`acquire(keys): keys
 * must name at least one lock`), as a bad single key does (`acquire(key): ...`). A bad element of
 * the list alone did not: `The lock key keys[1] must be a string, got number.`, from any of the
 * three calls.
 */
const calls: [string, RegExp, (locks: LockService) => Promise<unknown>][] = [
  ['acquire', /^acquire\(keys\): The lock key keys\[1\] must be a string, got number/, (locks) => locks.acquire(['a', 5 as never])],
  ['tryAcquire', /^tryAcquire\(keys\): The lock key keys\[0\] must not be empty/, (locks) => locks.tryAcquire(['', 'a'])],
  ['using', /^using\(keys\): The lock key keys\[1\] is not well-formed Unicode/, (locks) => locks.using(['a', 'b\uD800'], () => 1)],
];

describe.each(useBothStores())('a key list with a bad element ($label)', (backend) => {
  it.each(calls)('names the call (%s) as well as the element', async (_, message, call) => {
    const app = await backend.open();
    const error = await call(app.locks).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toMatch(message);
    expect(await app.locks.isLocked('a')).toBe(false);
  });
});
