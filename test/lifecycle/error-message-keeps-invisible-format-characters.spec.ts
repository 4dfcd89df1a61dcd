import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * quoteKey (lib/core/keys/quote-key.ts) escapes, in every log line and error message, "the
 * invisible and bidirectional formatting characters that make a line read otherwise" (U+200B..
 * U+200F, U+2060..U+206F, U+FEFF, ...). Other invisible format characters (Unicode category Cf)
 * pass raw: the tag characters U+E0020..U+E007F (invisible; used to smuggle text), the Arabic
 * number signs U+0600..U+0605 (U+061C is covered), the musical format characters U+1D173..U+1D17A.
 * Two keys that differ only by such a character read the same in a log: "payments:42" and
 * "payments:42<U+E0031>".
 */
describe('an error message naming a key with an invisible format character', () => {
  useRedis();

  it.each([
    ['a tag character', 'payments:42\u{E0031}'],
    ['a musical format character', 'payments:\u{1D173}42'],
    ['an Arabic number sign', 'payments:\u060042'],
  ])('escapes %s, as it escapes U+200B', async (_what, key) => {
    const app = await createLockApp();
    try {
      const held = await app.locks.acquire(key);
      const error = await app.locks.acquire(key, { waitTimeout: 0 }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      // The control: a zero-width space is shown escaped.
      const zwsp = await app.locks.acquire('payments:\u200b42').then(async (lock) => {
        const refused = await app.locks.acquire('payments:\u200b42', { waitTimeout: 0 }).then(() => undefined, (e: unknown) => e);
        await lock.release();
        return refused as Error;
      });
      expect(zwsp.message).toContain('\\u200b');
      expect((error as Error).message.match(/\p{Cf}/gu) ?? []).toEqual([]);
      await held.release();
    } finally {
      await app.close();
    }
  });
});
