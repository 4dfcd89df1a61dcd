import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { cursorProblem, forceRelease, holderId, listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp } from '../support/lock-app.js';

describe('inspect() and the board listing on a Redis Cluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('pages through the locks of every master, with a client keyPrefix, and force-releases one', async () => {
    const client = new Cluster(cluster.nodes, { keyPrefix: 'app:' });
    const app = await createLockApp({ redis: client, keyPrefix: 'locks:' });
    try {
      const keys = ['}lead', '\\', 'ünïcødé 🔒', 'a*b?[c]', ...Array.from({ length: 26 }, (_, i) => `spread:${i}`)];
      const held = await Promise.all(keys.map((key) => app.locks.acquire(key, { label: `job ${key}` })));
      // A semaphore is listed with its holders, inspected with the client's keyPrefix.
      const permits = await Promise.all(['a', 'b'].map((who) => app.locks.acquire('pool', { limit: 3, label: `permit ${who}` })));
      // Unrelated keys on every master: pages scan past them.
      for (let i = 0; i < 3_000; i += 500) await Promise.all(Array.from({ length: 500 }, (_, j) => client.set(`cache:${i + j}`, 'x')));
      // A sibling key outside the lock pattern, and a lock under another prefix, are not listed.
      await client.set('locks:{spread:0}:fence-extra', '1');
      const manager = app.locks[LOCK_RUNNER] as LockManager;
      const seen: string[] = [];
      let cursor = '0';
      let pages = 0;
      const cursors: string[] = [];
      do {
        const page = await listLocks(manager, cursor, 5);
        cursors.push(page.cursor);
        for (const lock of page.locks) {
          if (lock.key === 'pool') {
            expect(lock).toMatchObject({ held: false, semaphore: { limit: 3, used: 2, waiters: 0 } });
            expect(lock.semaphore!.holders.map((holder) => holder.holder?.label).sort()).toEqual(['permit a', 'permit b']);
            continue;
          }
          expect(lock.holder?.label).toBe(`job ${lock.key}`);
          seen.push(lock.key);
        }
        expect(page.complete).toBe(page.cursor === '0');
        cursor = page.cursor;
        pages++;
      } while (cursor !== '0' && pages < 200);
      expect([...new Set(seen)].sort()).toEqual([...keys].sort());
      expect(pages).toBeGreaterThan(2);
      // Cursors name a master by the lowest slot it serves, and carry a digest of the slots the
      // masters scanned so far serve: every one the walk handed out is taken; a slot no master
      // serves first, no master at all, or another digest, is refused.
      for (const handedOut of cursors) expect(await cursorProblem(manager, handedOut)).toBeUndefined();
      // Any cursor but the last: within a master's scan or at the next master's start.
      const within = cursors.find((handedOut) => /^\d+-\d+(?:r[0-9a-f]{8})?m[0-9a-f]{8}$/.test(handedOut));
      expect(within).toBeDefined();
      expect(await cursorProblem(manager, within!.replace(/m[0-9a-f]{8}$/, 'm00000000'))).toMatch(/moved slots onto the masters the walk has scanned/);
      expect(await cursorProblem(manager, within!.replace(/m[0-9a-f]{8}$/, ''))).toMatch(/not a cursor this board hands out/);
      expect(await cursorProblem(manager, '1-0m00000000')).toMatch(/slot 1 first, but no master does now/);
      expect(await cursorProblem(manager, '12')).toMatch(/"<slot>-<digits>"/);
      expect(await cursorProblem(manager, '12m00000000')).toMatch(/not a cursor this board hands out/);
      expect(await cursorProblem(manager, '5461-0r0123abcd')).toMatch(/not a cursor this board hands out/);
      await Promise.all(permits.map((permit) => permit.release()));

      const seenOne = await app.locks.inspect('}lead');
      expect(seenOne).toMatchObject({ held: true, fencingToken: held[0]!.fencingToken, waiters: 0 });
      const { owner } = await manager.inspectWithOwner('}lead');
      expect(await forceRelease(manager, '}lead', holderId(owner!))).toBe(true);
      expect(await app.locks.isLocked('}lead')).toBe(false);
      await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
    } finally {
      await app.close();
      client.disconnect();
    }
  });
});
