/**
 * Found by review (forty-first session). A `ttl`, `waitTimeout` or `extend(ttl)` given as a
 * BigInt (a count read from a database driver or a config parser that returns them) was refused,
 * rightly, but the message showed the value as a plain number: "must be a number of milliseconds
 * ..., from 100 to 31536000000 ms, got 5000.", a value the user reads as valid, with nothing to
 * say that its type was the trouble. A BigInt is now shown as one (`5000n`).
 */
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { useRedis } from '../support/redis.js';

describe.each(['redis', 'memory'] as const)('a BigInt option value (%s store)', (label) => {
  useRedis();
  const store = useBothStores().find((backend) => backend.label === label)!;

  it('is shown as a BigInt when a lock call refuses it', async () => {
    const { locks } = await store.open();
    const refused = locks.acquire('bigint:k', { ttl: 5000n as unknown as number });
    await expect(refused).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(refused).rejects.toThrow(/got 5000n\.$/);
    // Nothing was taken: the key is free (its first read may find a new connection still
    // connecting on a loaded machine, past the read's 1 s grace: a CI run saw it twice).
    await expect.poll(() => locks.isLocked('bigint:k').catch(() => undefined)).toBe(false);
  });

  it('is shown as a BigInt when extend() refuses it, and the lock stays as it was', async () => {
    const { locks } = await store.open({ ttl: 3000 });
    const lock = await locks.acquire('bigint:e');
    const refused = lock.extend(5000n as unknown as number);
    await expect(refused).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(refused).rejects.toThrow(/^extend\(ttl\) of lock "bigint:e": .* got 5000n\.$/);
    expect(lock.held).toBe(true);
    await lock.release();
  });
});
