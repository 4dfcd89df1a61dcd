import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * A carried suspicion, shown (thirty-third session): lock keys and names holding a lone
 * surrogate are refused (test/lone-surrogate-keys.spec.ts), but the module's `keyPrefix` was
 * not. Redis gets keys as UTF-8, where a lone surrogate becomes U+FFFD, so two applications
 * given the prefixes 'billing\uD800:' and 'billing\uDC00:' (a prefix cut from an emoji, say),
 * which look like two namespaces, shared every lock: one's `tryAcquire('k')` answered `null`
 * while the other held its own 'k'. Such a prefix is refused at startup now, naming the option.
 */
describe('a keyPrefix holding a lone surrogate', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('is refused at startup, naming keyPrefix, before anything is taken', async () => {
    for (const keyPrefix of ['billing\uD800:', 'billing\uDC00:', '\uD83D']) {
      const refusal = await app({ keyPrefix }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(InvalidLockOptionsError);
      expect(refusal).toMatchObject({ option: 'keyPrefix' });
      expect((refusal as Error).message).toMatch(/well-formed/);
    }
    expect(await redis.keys('*')).toEqual([]);
  });

  it('is told from a well-formed one: a whole emoji in a prefix keeps its own locks', async () => {
    const smile = await app({ keyPrefix: 'billing\uD83D\uDE00:' });
    const other = await app({ keyPrefix: 'billing\uFFFD:' });
    const held = await smile.locks.acquire('k');
    const rival = await other.locks.tryAcquire('k');
    expect(rival).not.toBeNull();
    await rival?.release();
    await held.release();
  });
});
