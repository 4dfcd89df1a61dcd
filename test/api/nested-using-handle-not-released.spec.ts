/**
 * Defect: the lock handle a nested `using(key, fn)` passes to `fn` (the chain already holds
 * `key`) is not released when `using()` ends: it still says `held`, and `extend()` on it still
 * renews the outer lock's lease, after the `using()` that lent it returned.
 *
 * Promise: `LockService.using()` TSDoc "Acquires `key`, runs `fn(lock)`, and releases the lock
 * however `fn` ends"; `Lock.held` "Whether the lock is still held: not released and not lost";
 * docs/locks.md: "releasing the nested handle does nothing in Redis, the outermost holder
 * releases" (the handle is released; Redis is left alone). A nested `@Locked` call and an `await
 * using` of a nested `acquire()` do release their handle (`held` becomes false, `extend()`
 * rejects).
 *
 * What happens: lib/core/engine/lock-manager.ts, `using`: for a re-entered lock it runs
 * `return await fn(lock)` and skips the `finally { lock.release() }` the other path has, so the
 * `ReentrantLock` is never marked released.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockError, type Lock } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('the handle of a nested using()', () => {
  useRedis();
  let app: LockApp;
  afterEach(() => app?.close());

  it('is released when the nested using() ends, as a nested acquire() under await using is', async () => {
    app = await createLockApp();
    await app.locks.using('k', async (outer) => {
      let lent!: Lock;
      await app.locks.using('k', (nested) => {
        lent = nested;
      });
      let disposed!: Lock;
      {
        await using nested = await app.locks.acquire('k');
        disposed = nested;
      }
      // The documented behaviour, for contrast.
      expect(disposed.held).toBe(false);
      await expect(disposed.extend()).rejects.toBeInstanceOf(RedisLockError);
      // The outer holder still holds the lock; the lent handle is over.
      expect(outer.held).toBe(true);
      expect(lent.held).toBe(false);
      await expect(lent.extend()).rejects.toBeInstanceOf(RedisLockError);
    });
  });
});
