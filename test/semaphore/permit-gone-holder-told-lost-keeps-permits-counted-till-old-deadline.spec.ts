import { once } from 'node:events';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError, type Lock, type LockService } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { lapseHolderKey } from '../support/lapsed-holder.js';
import { createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';

/**
 * Found by review (forty-second session): a semaphore holder whose permit key was evicted or
 * deleted is told it lost the lock at its next renewal (the renewal finds the key gone), yet on
 * Redis its entry in the holders hash kept its permits counted: a count looks at a holder only
 * once its known deadline (its score in the due set) has passed, and that was the deadline of
 * the lease the lost holder no longer has. Callers were refused, and waiters kept waiting, for up
 * to a whole ttl after the only holder told of the loss; the in-memory store let them in at once.
 * And with no count after it, the last holder's release left the holders hash and the due set
 * behind (the lost holder's entry in them) until that deadline, after every application closed.
 * The renewal that finds the permit gone now drops its entry, as a count would.
 */
describe('a semaphore holder told at a renewal that its permit key is gone', () => {
  const OPTIONS = { ttl: 60_000, renewInterval: 200 };

  type Lapse = (holder: Lock) => Promise<boolean>;

  /**
   * Two holders of limit 2, both scored by a refused caller's count (with their lease deadlines,
   * a minute off), the permit of the first taken away by `lapse` and the first told so at its
   * renewal. Returns the second.
   */
  async function secondAfterFirstLost(locks: LockService, key: string, lapse: Lapse): Promise<Lock> {
    const a = await locks.acquire(key, { limit: 2 });
    const b = await locks.acquire(key, { limit: 2 });
    await expect(locks.acquire(key, { limit: 2, waitTimeout: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await lapse(a)).toBe(true);
    if (!a.signal.aborted) await once(a.signal, 'abort');
    expect((a.signal.reason as LockLostError).reason).toBe('refused');
    return b;
  }

  /** A third caller is let in beside the second: the first holds nothing. */
  async function thirdLetIn(locks: LockService, key: string, lapse: Lapse): Promise<void> {
    const b = await secondAfterFirstLost(locks, key, lapse);
    // Before: LockNotAcquiredError on Redis (the first's permit counted until its old deadline,
    // a minute off), a lock in memory.
    let c: Lock | undefined;
    try {
      c = await locks.acquire(key, { limit: 2, waitTimeout: 0 });
      expect(c.held).toBe(true);
    } finally {
      await Promise.all([b.release(), c?.release()]);
    }
  }

  /** The second's release, the last holder's, leaves nothing in Redis (`exists` counts the holders hash and the due set). */
  async function nothingLeftAfterLastRelease(locks: LockService, key: string, lapse: Lapse, exists: () => Promise<number>): Promise<void> {
    await (await secondAfterFirstLost(locks, key, lapse)).release();
    // Before: 2 (the holders hash and the due set, the lost holder's entry in them, for a minute).
    expect(await exists()).toBe(0);
  }

  for (const backend of useBothStores()) {
    it(`no longer counts against the limit once told (${backend.label})`, async () => {
      const { locks } = await backend.open(OPTIONS);
      const key = uniqueKey('permit-gone');
      await thirdLetIn(locks, key, (holder) => lapseHolderKey(backend.label, locks, key, 'permit', holder));
    });
  }

  it('leaves nothing behind once the last holder released (one Redis)', async () => {
    const app = await createLockApp(OPTIONS);
    const redis = new Redis(redisUrl());
    try {
      const key = uniqueKey('permit-gone-last');
      const lapse = (holder: Lock) => lapseHolderKey('redis', app.locks, key, 'permit', holder);
      await nothingLeftAfterLastRelease(app.locks, key, lapse, () => redis.exists(`lock:{${key}}:holders`, `lock:{${key}}:due`));
    } finally {
      await app.close();
      redis.disconnect();
    }
  });

  describe('on a 3-master Redis Cluster (renewals batched per master)', () => {
    const opened = useRedisCluster();

    it('no longer counts against the limit once told, and leaves nothing behind once the last holder released', async () => {
      const { cluster, admin } = opened;
      const client = new Cluster(cluster.nodes);
      const app = await createLockApp({ redis: client as never, ...OPTIONS });
      try {
        const key = uniqueKey('permit-gone');
        // A mutex renewed by the same ticks of the watchdog, beside the permits.
        const mutex = await app.locks.acquire('renewed-beside');
        const lapse = (of: string): Lapse => async (holder) => (await admin.del(`lock:{${of}}:permit:${(holder as unknown as { token: string }).token}`)) === 1;
        await thirdLetIn(app.locks, key, lapse(key));
        const last = uniqueKey('permit-gone-last');
        await nothingLeftAfterLastRelease(app.locks, last, lapse(last), () => admin.exists(`lock:{${last}}:holders`, `lock:{${last}}:due`));
        await mutex.release();
      } finally {
        await app.close();
        client.disconnect();
      }
    });
  });
});
