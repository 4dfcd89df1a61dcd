import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (thirty-seventh session), beside
 * test/lifecycle/option-error-echoes-unsafe-characters.spec.ts (which fixed the value). A name that
 * is no option is refused, and the refusal shows it as `Option "<name>"` with the name raw and
 * whole: options spread from input (`{ ...defaults, ...req.query }`) put a name with C1 controls,
 * line separators or bidi overrides into the message, and a 100 KB name made a 100 KB message,
 * in the 500's error log line of every such request.
 */
const FORGED = 'x\u0085[Nest] 1  - ERROR forged\u2028line\u009b31m\u202Eeno';
const UNESCAPED = /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

describe('the message of an InvalidLockOptionsError for an unknown option name', () => {
  useRedis();
  const app = useLockApps();

  it('escapes and bounds the name as it does the value', async () => {
    const { locks } = await app();
    const name = `${FORGED}${'n'.repeat(100_000)}`;
    const error = await locks.acquire('order:1', { [name]: 1 } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    // The property keeps the name as given.
    expect((error as InvalidLockOptionsError).option).toBe(name);
    // Before: the message carries U+0085, U+2028, U+009B and U+202E raw, and the 100,000 n's.
    expect((error as Error).message).not.toMatch(UNESCAPED);
    expect((error as Error).message.length).toBeLessThan(1_000);
    expect(await locks.isLocked('order:1')).toBe(false);
  });

  it('shows a plain name as before', async () => {
    const { locks } = await app();
    const error = await locks.acquire('order:1', { permit: 2 } as never).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^acquire\("order:1"\): Option "permit" must be left out/);
  });
});
