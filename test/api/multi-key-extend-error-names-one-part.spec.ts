import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (thirty-first session, fixes). 63b664c names extend()'s bad ttl with the lock it was called on
 * (`extend(ttl) of lock "k": Option "ttl" ...`, HeldLock.checkedTtl). A multi-key lock's extend()
 * (MultiLock.extend, lib/core/multi-key/multi-key-lock.ts) calls each part's extend() and rejects
 * with the first part's error, so `extend(-1)` on the lock of ['account:1', 'account:2'] says
 * `extend(ttl) of lock "account:1": ...`: a lock the caller never took on its own, and the other
 * key is not named. The call should be named as the caller made it (a multi-key lock's extend).
 */
describe.each(useBothStores())('extend() of a multi-key lock given a bad ttl ($label)', (backend) => {
  it('names the multi-key lock it was called on, not one of its parts', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire(['account:1', 'account:2']);
    const error = await lock.extend(-1).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    const text = (error as Error).message;
    expect(text).toMatch(/^extend\(ttl\) of /);
    expect(text).not.toMatch(/^extend\(ttl\) of lock "account:1": /);
    expect(text).toContain('account:2');
    await lock.release();
  });
});
