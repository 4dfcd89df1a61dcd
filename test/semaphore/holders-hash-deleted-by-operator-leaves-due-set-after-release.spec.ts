import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, type LockLostError, type Lock } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Suspected by review: an operator deletes a semaphore's holders hash (`DEL P{K}:holders`) while
 * holders hold, and leaves its due set. The semaphore looks empty, newcomers are let in beside the
 * old holders, and those are told at their next renewal
 * (test/semaphore/guards-evicted-holders-told-at-next-renewal.spec.ts). The first newcomer made
 * a new hash without the `:due` mark (the fast paths asked only whether the hash or the waiters
 * set was there), so the last release deleted the hash and left the old due set, which outlived
 * everyone's release and `app.close()` (until its expiry, pushed on by every renewal meanwhile),
 * where docs/redis-data.md says a hash without the mark has no due set beside it. A due set found
 * without a hash now sends the caller to the full path, which deletes it before the new hash.
 */
describe('a semaphore whose holders hash an operator deleted while its holders held', () => {
  const redis = useRedis();

  it('tells the old holders, and leaves only the fencing counter once everyone released', async () => {
    const app = await createLockApp({ ttl: 3_000 });
    try {
      const key = 'deleted-holders';
      const a = await app.locks.acquire(key, { limit: 2 });
      const b = await app.locks.acquire(key, { limit: 2 });
      // A full call, refused: it scores the holders in the due set, which the operator leaves.
      await expect(app.locks.acquire(key, { limit: 2, waitTimeout: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
      expect(await redis.exists(`lock:{${key}}:due`)).toBe(1);
      await redis.del(`lock:{${key}}:holders`);
      const c = await app.locks.acquire(key, { limit: 2, waitTimeout: 0 });
      const d = await app.locks.acquire(key, { limit: 2, waitTimeout: 0 });
      const lost = async (lock: Lock): Promise<string> => {
        if (!lock.signal.aborted) await once(lock.signal, 'abort');
        return (lock.signal.reason as LockLostError).reason;
      };
      expect(await Promise.all([lost(a), lost(b)])).toEqual(['refused', 'refused']);
      expect(c.held && d.held).toBe(true);
      for (const lock of [a, b, c, d]) await lock.release().catch(() => undefined);
      await app.close();
      // Before: the due set too, until its expiry.
      expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
    } finally {
      await app.close();
    }
  });
});
