import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review. An `InvalidLockOptionsError` shows the refused value (lib/errors/
 * invalid-lock-options.error.ts, `show()`) through `JSON.stringify`, which escapes only
 * U+0000-U+001F, `"` and `\`. Keys go through `quoteKey()` (lib/core/keys/quote-key.ts), which
 * also escapes what JSON leaves raw and a terminal or log viewer still acts on (C1 controls: U+0085
 * NEL is a newline, U+009B CSI starts an ANSI sequence; U+2028/U+2029; bidi overrides); the
 * option values do not. A `name` or `label` built from user input (`name: \`tenant:${tenant}\``)
 * that is refused forges log lines through the error's message when the application logs it.
 */
const FORGED = 'x\u0085[Nest] 1  - ERROR forged\u2028line\u009b31m\u202Eeno';
const UNESCAPED = /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

describe('the message of an InvalidLockOptionsError for a string value', () => {
  useRedis();
  const app = useLockApps();

  it('escapes C1 controls, line separators and bidi overrides, as quoteKey() does for keys', async () => {
    const { locks } = await app();
    const error = await locks.acquire('order:1', { name: `${FORGED}${'n'.repeat(200)}` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('name');
    // Before the fix: the message carries U+0085, U+2028, U+009B and U+202E raw.
    expect((error as Error).message).not.toMatch(UNESCAPED);
  });
});
