import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * The lock board pages through the locks with a cursor; docs/observability.md: "The locks are
 * found with SCAN", and lock-admin.ts: "SCAN may return a key twice; it never misses a lock held
 * for the whole scan". The in-memory store of `nestjs-redis-lock/testing` "must behave like
 * Redis" (docs/testing.md), but its `scanLocks()` (lib/core/stores/memory/memory-store.ts:155)
 * pages by position in the sorted list of locks held *now*: its cursor is an offset. When a lock
 * listed on an earlier page is released before the next page is asked for (the board refreshes
 * every second, locks come and go), every later lock shifts one place down and the one at the
 * cursor is never shown, though it was held from the first page to the last. Redis' SCAN
 * cursor does not move with deletions, so the same walk on Redis lists it.
 */
describe.each(['redis', 'memory'] as const)('listing the locks page by page while one listed lock is released (%s)', (store) => {
  useRedis();
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('lists every lock held for the whole walk', async () => {
    const module = store === 'redis' ? RedisLockModule.forRoot({ redis: redisUrl() }) : RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() });
    const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    close = () => moduleRef.close();
    const locks = moduleRef.get(LockService);
    const manager = locks[LOCK_RUNNER] as LockManager;
    const held = new Map<string, { release(): Promise<void> }>();
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) held.set(key, await locks.acquire(key));

    const seen = new Set<string>();
    let cursor = '0';
    let pages = 0;
    let released: string | undefined;
    do {
      const page = await listLocks(manager, cursor, 2);
      for (const lock of page.locks) seen.add(lock.key);
      // After the first page, one of the locks it showed is given back (as happens all the time).
      if (released === undefined && page.locks.length > 0) {
        released = page.locks[0]!.key;
        await held.get(released)!.release();
        held.delete(released);
      }
      cursor = page.cursor;
      pages++;
    } while (cursor !== '0' && pages < 50);

    const missed = [...held.keys()].filter((key) => !seen.has(key));
    expect(missed).toEqual([]);
  });
});
