import { describe, expect, it } from 'vitest';
import { LockKeyError } from '../lib/index.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/**
 * Found by review: a key goes to Redis as UTF-8, where a lone surrogate (what `str.slice(0, n)`
 * leaves of an emoji cut in half) becomes U+FFFD, so 'k:\uD800', 'k:\uDC00' and 'k:\uFFFD' were
 * three keys here and one lock in Redis. A multi-key call on two of them waited for itself until
 * its waitTimeout, and two callers naming them in their own canonical orders could deadlock.
 * Such keys are refused now, before Redis is asked.
 */
describe('keys holding a lone surrogate', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('are refused naming the key, before anything is taken, one key or several', async () => {
    const { locks } = await app({ waitTimeout: 1_000 });
    await expect(locks.acquire(['user:\uD83D', 'user:\uDE00'])).rejects.toThrow(LockKeyError);
    await expect(locks.acquire(['user:ok', 'user:\uDE00'])).rejects.toThrow(/keys\[1\] is not well-formed Unicode/);
    await expect(locks.tryAcquire('user:\uD83D')).rejects.toThrow(/lone surrogate/);
    await expect(locks.using('k:\uD800', async () => undefined)).rejects.toThrow(LockKeyError);
    expect(await redis.keys('lock:*')).toEqual([]);
  });

  it('are told from well-formed keys: a whole emoji and U+FFFD itself are ordinary keys', async () => {
    const { locks } = await app();
    const lock = await locks.acquire(['user:\uD83D\uDE00', 'k:\uFFFD']);
    expect(lock.keys).toHaveLength(2);
    await lock.release();
  });
});
