import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useQuorumServers } from '../support/quorum-nodes.js';
import { useLockApps } from '../support/lock-app.js';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';

describe('inspect() in quorum mode', () => {
  const servers = useQuorumServers();
  const app = useLockApps();

  it('reports the majority view, and fails without a majority', async () => {
    const { locks } = await app({ redis: servers.map((server) => server.url), instanceName: 'q' });
    const lock = await locks.acquire('q:1', { ttl: 10_000, label: 'quorum job' });
    expect(await locks.inspect('q:1')).toMatchObject({ held: true, fencingToken: lock.fencingToken, waiters: 0, holder: { instance: 'q', label: 'quorum job' } });
    const manager = locks[LOCK_RUNNER] as LockManager;
    expect((await listLocks(manager, '0', 10)).locks.map((lock) => lock.key)).toEqual(['q:1']);
    servers[0]!.pause();
    try {
      expect(await locks.inspect('q:1')).toMatchObject({ held: true, holder: { label: 'quorum job' } });
      // The board lists from the next node when the first does not answer.
      const page = await listLocks(manager, '0', 10);
      expect(page.locks.map((lock) => lock.key)).toEqual(['q:1']);
      servers[1]!.pause();
      await expect(locks.inspect('q:1')).rejects.toThrow(RedisLockError);
      await expect(locks.inspect('q:1')).rejects.toThrow(/Quorum not reached to inspect/);
    } finally {
      servers[0]!.resume();
      servers[1]!.resume();
    }
    await lock.release();
    expect(await locks.inspect('q:1')).toMatchObject({ held: false });
  });

  // Found by review: the error counted the nodes that held the lock as the nodes that "agreed",
  // so a check one node answered (lock free) said "0 of 3 Redis nodes agreed".
  it('isLocked() without a majority says how many nodes answered', async () => {
    const { locks } = await app({ redis: servers.map((server) => server.url), instanceName: 'q' });
    expect(await locks.isLocked('q:free')).toBe(false);
    servers[0]!.pause();
    servers[1]!.pause();
    try {
      await expect(locks.isLocked('q:free')).rejects.toThrow(RedisLockError);
      await expect(locks.isLocked('q:free')).rejects.toThrow(/Quorum not reached to check the lock: 1 of 3 Redis nodes answered, 2 needed/);
      await expect(locks.inspect('q:free')).rejects.toThrow(/Quorum not reached to inspect the lock: 1 of 3 Redis nodes answered, 2 needed/);
    } finally {
      servers[0]!.resume();
      servers[1]!.resume();
    }
  });
});
