import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { useLockApps } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review: in quorum mode the lock board listed the keys of the first node that answered
 * and called the scan complete. A node that restarted empty after a lock was taken (the lock
 * still held by the other two, a majority: `inspect()` says held, `lock.held` is true) made the
 * page say "No lock is held". The scan now walks every node in turn, and lists on each node's
 * pages the locks that node holds (a later review found that leaving out what an earlier node
 * holds could leave a lock out of the whole walk:
 * quorum-board-walk-misses-lock-restored-on-scanned-node.spec.ts).
 */
describe('the lock board in quorum mode', () => {
  const servers = useQuorumServers();
  const app = useLockApps();

  it('lists a lock the first node lost, and each lock once per node that holds it, complete only after the last node', async () => {
    const { locks } = await app({ redis: servers.map((server) => server.url) });
    const everywhere = await locks.acquire('q:everywhere', { ttl: 30_000 });
    const lost = await locks.acquire('q:lost-on-node-0', { ttl: 30_000 });
    // Node 0 loses it (as a node restarted empty would): nodes 1 and 2 still hold it.
    const node0 = new Redis(servers[0]!.url);
    await node0.del('lock:{q:lost-on-node-0}');
    node0.disconnect();
    expect(lost.held).toBe(true);
    expect(await locks.inspect('q:lost-on-node-0')).toMatchObject({ held: true });

    const manager = locks[LOCK_RUNNER] as LockManager;
    const listed: string[] = [];
    const cursors: string[] = [];
    let cursor = '0';
    for (let page = 0; page < 10; page++) {
      const result = await listLocks(manager, cursor, 10);
      listed.push(...result.locks.map((lock) => lock.key));
      cursor = result.cursor;
      cursors.push(cursor);
      if (result.complete) break;
    }
    expect({ listed: listed.sort(), complete: cursor }).toEqual({ listed: ['q:everywhere', 'q:everywhere', 'q:everywhere', 'q:lost-on-node-0', 'q:lost-on-node-0'], complete: '0' });
    // One node after the other: 0, then 1, then 2.
    expect(cursors).toEqual(['1-0', '2-0', '0']);
    await Promise.all([everywhere.release(), lost.release()]);
  });
});
