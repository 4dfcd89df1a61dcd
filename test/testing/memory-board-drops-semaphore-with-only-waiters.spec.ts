import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * The lock board lists "semaphores in use" (lock-admin.ts): on Redis it finds them by their
 * holders hash, which keeps the limit in its `:limit` field while the semaphore has holders *or
 * waiters* (the scripts' `keep_limit` guards it for two waiter leases after each join). The
 * in-memory store keeps the limit in a map of its own, and its `scanLocks()` looked only at
 * the holders map: once the last holder's lease ran out (a holder that crashed) while a waiter
 * still waited, the first poll showed the semaphore (the expired holders entry was still in the
 * map, and dropped by the read), every poll after it did not, though the waiter was still
 * there, as Redis' board goes on showing it.
 */
describe.each(['redis', 'memory'] as const)('the board on a semaphore whose holder crashed while a waiter waits (%s)', (store) => {
  useRedis();
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('lists the semaphore with its waiter on every poll', async () => {
    const module = store === 'redis' ? RedisLockModule.forRoot({ redis: redisUrl() }) : RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() });
    const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    close = () => moduleRef.close();
    const manager = moduleRef.get(LockService)[LOCK_RUNNER] as LockManager;
    const semaphores = manager.store.semaphores!;
    const key = 'jobs';
    const base = lockRedisKeys(manager.keyPrefix, key);
    // A holder that will not renew (crashed), and a waiter queued for a long while (a waiter lease of 10 s).
    const holder = await semaphores.acquire(semaphoreKeys(base, 'crashed', key, 1, 1), 'crashed', 300, false, 10_000);
    expect(holder.acquired).toBe(true);
    const waiter = await semaphores.acquire(semaphoreKeys(base, 'waiting', key, 1, 1), 'waiting', 5_000, true, 10_000);
    expect(waiter).toMatchObject({ acquired: false, joined: true });
    const listed = async () => (await listLocks(manager, '0', 100)).locks.filter((lock) => lock.key === key).map((lock) => lock.semaphore);

    expect(await listed()).toEqual([{ limit: 1, used: 1, holders: [expect.objectContaining({ permits: 1 })], waiters: 1 }]);
    // The holder's lease runs out; nobody calls the store meanwhile.
    await sleep(600);
    for (let poll = 0; poll < 3; poll++) expect(await listed()).toEqual([{ limit: 1, used: 0, holders: [], waiters: 1 }]);
  });
});
