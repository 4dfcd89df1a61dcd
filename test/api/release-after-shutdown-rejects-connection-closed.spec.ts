/**
 * Defect: `release()` of a lock that `app.close()` already gave back rejects with the Redis
 * client's raw "Connection is closed." error.
 *
 * Promise: `Lock.release()` TSDoc / docs/locks.md: "Idempotent; calling it on a lost lock never
 * touches another owner's lock"; docs/configuration.md "Shutdown": the module "aborts the signal
 * of every holder with LockLostError reason shutdown, gives every held lock back". The pattern
 * the docs teach for a hand-taken lock is `try { await work(lock.signal) } finally { await
 * lock.release() }` (LockService.acquire() TSDoc) or `await using lock = ...`: at shutdown the
 * work sees its signal abort and winds down, and the `finally` / end of scope releases a lock
 * that is already back in Redis. That release has nothing left to do and should resolve.
 *
 * What happens: `HeldLock.shutdown()` (lib/core/engine/held-lock.ts) marks the lock lost and
 * releases it in Redis through `owner.releaseInRedis()` without recording that release in
 * `this.releasing`, so the holder's later `release()` runs `releaseInRedis()` again and sends a
 * second release script over the connection the module closed in `onApplicationShutdown`: it
 * rejects with ioredis' `Error: Connection is closed.` (not even a `RedisLockError`), which
 * replaces the holder's own error in the `finally` and, from `await using`, is thrown at the end
 * of the scope. A multi-key lock's `release()` rejects the same way.
 */
import { describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('release() of a lock app.close() gave back', () => {
  const redis = useRedis();

  it('resolves: the lock is already back in Redis', async () => {
    const app = await createLockApp();
    const lock = await app.locks.acquire('k');
    const several = await app.locks.acquire(['m1', 'm2']);
    await app.close();
    // Shutdown told the holder and gave the locks back.
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect((lock.signal.reason as LockLostError).reason).toBe('shutdown');
    expect(await redis.exists('lock:{k}', 'lock:{m1}', 'lock:{m2}')).toBe(0);
    // The holder's finally block.
    await expect(lock.release()).resolves.toBeUndefined();
    await expect(several.release()).resolves.toBeUndefined();
  });

  it('does not throw at the end of an await using scope whose work ended on the shutdown signal', async () => {
    const app = await createLockApp();
    let closedNow!: () => void;
    const closed = new Promise<void>((resolve) => (closedNow = resolve));
    let acquiredNow!: () => void;
    const acquired = new Promise<void>((resolve) => (acquiredNow = resolve));
    const job = (async () => {
      await using lock = await app.locks.acquire('report');
      acquiredNow();
      // The work stops when its lock's signal aborts (here: at shutdown).
      await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
      // ...and finishes winding down after the application has closed.
      await closed;
      return 'wound down';
    })();
    // The holder has its lock (not merely Redis: an acquire still on its way at close fails).
    await acquired;
    expect(await redis.exists('lock:{report}')).toBe(1);
    await app.close();
    closedNow();
    await expect(job).resolves.toBe('wound down');
    expect(await redis.exists('lock:{report}')).toBe(0);
  });
});
