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
 * where docs/redis-data.md says a hash without the mark has no due set beside it. With no
 * newcomer, the old holders' releases (told lost, their permits still there) deleted their
 * permits and left the due set the same way. A due set found without a hash now sends an acquire
 * to the full path, which deletes it before the new hash, and a release that finds no hash
 * deletes it.
 */
describe('a semaphore whose holders hash an operator deleted while its holders held', () => {
  const redis = useRedis();

  /** Why `lock` was lost: 'refused' when a renewal told it. */
  async function lossOf(lock: Lock): Promise<string> {
    if (!lock.signal.aborted) await once(lock.signal, 'abort');
    return (lock.signal.reason as LockLostError).reason;
  }

  /**
   * Two holders of `key` (limit 2), scored in the due set by a full call refused, then the hash
   * deleted from outside; `newcomers` callers let in after that. Everyone releases (the old
   * holders once told), the application closes, and what is left of the semaphore is answered.
   */
  async function leftAfter(key: string, newcomers: number): Promise<string[]> {
    const app = await createLockApp({ ttl: 3_000 });
    try {
      const old = [await app.locks.acquire(key, { limit: 2 }), await app.locks.acquire(key, { limit: 2 })];
      await expect(app.locks.acquire(key, { limit: 2, waitTimeout: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
      expect(await redis.exists(`lock:{${key}}:due`)).toBe(1);
      await redis.del(`lock:{${key}}:holders`);
      const added: Lock[] = [];
      for (let i = 0; i < newcomers; i++) added.push(await app.locks.acquire(key, { limit: 2, waitTimeout: 0 }));
      expect(await Promise.all(old.map(lossOf))).toEqual(['refused', 'refused']);
      expect(added.every((lock) => lock.held)).toBe(true);
      for (const lock of [...old, ...added]) await lock.release().catch(() => undefined);
    } finally {
      await app.close();
    }
    return (await redis.keys(`lock:{${key}}*`)).sort();
  }

  it('tells the old holders, and leaves only the fencing counter once they and the newcomers released', async () => {
    // Before: the due set too, until its expiry (the newcomers' hash had no ':due' mark).
    expect(await leftAfter('deleted-holders', 2)).toEqual(['lock:{deleted-holders}:fence']);
  });

  it('leaves only the fencing counter once the old holders, told, released, with no newcomer since', async () => {
    // Before: the due set too (their releases found no hash, and did not look for it).
    expect(await leftAfter('deleted-holders-alone', 0)).toEqual(['lock:{deleted-holders-alone}:fence']);
  });
});
