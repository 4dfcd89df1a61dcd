// docs/locks.md:104 (Errors table): "`LockKeyError` | the key is not a string, is empty, longer
// than 1024 characters or not well-formed Unicode (a lone surrogate ...)"; and locks.md:98: "All
// extend `RedisLockError`, so one `instanceof` tells lock trouble from your own errors" — the
// table names one class per kind of trouble. @Locked templates and the job decorators keep to it
// (a bad `@WithoutOverlapping({ key })` throws LockKeyError when the class is defined).
//
// What happens: `@LeaderElection(key)` with such a key throws a plain `RedisLockError`
// (lib/decorators/leader-election.decorator.ts:55-61, `checkKey` rewraps the LockKeyError of
// checkLockKey as `new RedisLockError(...)`), so `instanceof LockKeyError` is false for the one
// decorator whose only argument is a key. The message is fine; the class is not.
import { describe, expect, it } from 'vitest';
import { LeaderElection, LockKeyError, WithoutOverlapping } from '../lib/index.js';

function defineElection(key: unknown): unknown {
  try {
    @LeaderElection(key as string)
    class Elected {}
    return Elected;
  } catch (error) {
    return error;
  }
}

describe('@LeaderElection(key) with a key no lock can have', () => {
  it('a bad job key is a LockKeyError (the documented class), for comparison', () => {
    let error: unknown;
    try {
      class Jobs {
        @WithoutOverlapping({ key: '' })
        async run(): Promise<void> {}
      }
      void Jobs;
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(LockKeyError);
  });

  it.each([
    ['an empty key', ''],
    ['a key of 1025 characters', 'k'.repeat(1025)],
    ['a key with a lone surrogate', 'leader\uD800'],
    ['a key that is not a string', 42],
  ])('throws LockKeyError for %s', (_what, key) => {
    const error = defineElection(key);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/@LeaderElection\(\) on Elected/);
    expect(error).toBeInstanceOf(LockKeyError);
  });
});
