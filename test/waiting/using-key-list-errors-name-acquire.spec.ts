import { describe, expect, it } from 'vitest';
import { LockKeyError } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (rev-a): bad input must get an error naming the method. `using(keys, fn)`
 * checks its key list through `acquire()`, so an empty or oversized list passed to `using()`
 * is reported as a mistake of `acquire(keys)`, a method the caller never called
 * (`tryAcquire(keys)` names itself correctly).
 */
describe('using() with a bad key list', () => {
  for (const backend of useBothStores()) {
    it(`names using() in its LockKeyError (${backend.label})`, async () => {
      const app = await backend.open();
      let ran = false;
      const error = await app.locks
        .using([], () => {
          ran = true;
        })
        .catch((caught: unknown) => caught);
      expect(ran).toBe(false);
      expect(error).toBeInstanceOf(LockKeyError);
      // tryAcquire names itself: the same check, the right method.
      const tryError = await app.locks.tryAcquire([]).catch((caught: unknown) => caught);
      expect((tryError as Error).message).toMatch(/^tryAcquire\(keys\)/);
      expect((error as Error).message).toMatch(/^using\(keys, fn\)|^using\(keys\)/);
    });
  }
});
