import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';

/**
 * Found by review (thirtieth session): the module, `@Locked` and the job decorators refuse an option name
 * they do not know (lock-options.ts `checkKnown`, locked-options.ts, job-spec.ts); a LockService
 * call does not (lock-manager.ts `resolve`: resolveLockOptions / resolveSemaphoreOptions read the
 * names they know and drop the rest). Options shared as a constant (one known name passes
 * TypeScript's weak-type check) or built in JavaScript lose a misspelt `permit` without a word:
 * "a big export takes 2 of the 3 permits" takes 1, and three of them run at once on limit 3.
 */
describe('a semaphore call with a misspelt option name (review)', () => {
  for (const store of useBothStores()) {
    it(`is refused naming the option, not run on one permit (${store.label})`, async () => {
      const { locks } = await store.open();
      const key = uniqueKey('export');
      const HUGE = { limit: 3, permit: 2 } as const;
      const taken = [];
      let failure: unknown;
      try {
        for (let i = 0; i < 3; i++) taken.push(await locks.acquire(key, { ...HUGE, waitTimeout: 0 }));
      } catch (error) {
        failure = error;
      }
      await Promise.all(taken.map((lock) => lock.release()));
      // Before: no error; three "two-permit" holders at once under limit 3.
      expect({ holders: taken.length, failure: (failure as InvalidLockOptionsError | undefined)?.option }).toEqual({ holders: 0, failure: 'permit' });
    });
  }
});
