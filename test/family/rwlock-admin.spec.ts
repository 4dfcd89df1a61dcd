import { describe, expect, it } from 'vitest';
import { forceRelease, holderId } from '../../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('the lock board and inspect() on a key held by readers', () => {
  useRedis();
  const app = useLockApps();

  it('shows it held without a holder, and leaves it alone on a forced release', async () => {
    const { locks } = await app();
    const manager = locks[LOCK_RUNNER] as LockManager;
    const reader = await locks.acquire('rw-admin', { mode: 'read' });
    expect(await locks.inspect('rw-admin')).toMatchObject({ key: 'rw-admin', held: true });
    expect((await locks.inspect('rw-admin')).holder).toBeUndefined();
    // Readers renew their own keys and would never learn of it: a writer could run beside them.
    expect(await forceRelease(manager, 'rw-admin', holderId('~r'))).toBe(false);
    expect(await locks.tryAcquire('rw-admin')).toBeNull();
    await reader.release();
    expect(await locks.isLocked('rw-admin')).toBe(false);
    await locks.acquire('rw-admin', { waitTimeout: 0 });
    const { owner } = await manager.inspectWithOwner('rw-admin');
    expect(await forceRelease(manager, 'rw-admin', holderId(owner!))).toBe(true);
  });
});
