import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, type LockService } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (thirty-fourth session): a nested call that needs a fencing token, in a chain
 * holding its key with `fencing: false`, is refused with `InvalidLockOptionsError` (option
 * `fencing`), and that refusal alone did not say which call it was given to, although every other
 * refusal of a call's options does (`acquire("k"): Option ...`, see
 * lock-call-errors-name-the-call.spec.ts): a multi-key call's, which checks every key before it
 * takes any, named neither the call nor that it was a key list.
 */
const nested: [string, RegExp, (locks: LockService) => Promise<unknown>][] = [
  ['acquire', /^acquire\("k"\): Option "fencing"/, (locks) => locks.acquire('k')],
  ['tryAcquire', /^tryAcquire\("k"\): Option "fencing"/, (locks) => locks.tryAcquire('k')],
  ['using', /^using\("k", fn\): Option "fencing"/, (locks) => locks.using('k', () => 1)],
  ['acquire(keys)', /^acquire\(keys\): Option "fencing"/, (locks) => locks.acquire(['a', 'k'])],
  ['tryAcquire(keys)', /^tryAcquire\(keys\): Option "fencing"/, (locks) => locks.tryAcquire(['a', 'k'])],
  ['using(keys)', /^using\(keys\): Option "fencing"/, (locks) => locks.using(['a', 'k'], () => 1)],
];

describe.each(useBothStores())('a nested call needing a token in a chain holding its key unfenced ($label)', (backend) => {
  it.each(nested)('names the call (%s) as well as the option', async (_, message, call) => {
    const app = await backend.open();
    const error = await app.locks.using('k', () => call(app.locks).catch((caught: unknown) => caught), { fencing: false });
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('fencing');
    expect((error as Error).message).toMatch(message);
    // Refused before any key was taken.
    expect(await app.locks.isLocked('a')).toBe(false);
    expect(await app.locks.isLocked('k')).toBe(false);
  });
});
