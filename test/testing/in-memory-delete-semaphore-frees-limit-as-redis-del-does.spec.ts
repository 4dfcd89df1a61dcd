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
 * Suspected by review, shown not to happen. `InMemoryLocks.delete()` takes a semaphore's holders
 * away "as an operator's DEL would in Redis". On Redis the limit is a field of the holders hash:
 * with the hash deleted the semaphore is gone, from the board and for a caller with another
 * limit. The in-memory twin keeps the limit in a map of its own, which `delete()` leaves; it is
 * forgotten all the same, as the semaphore has neither holders nor waiters (the scripts'
 * `keep_limit`: a limit lives while its semaphore is in use), before the board reads it or the
 * next caller is checked against it.
 */
describe.each(['redis', 'memory'] as const)('a semaphore whose holders were deleted (%s)', (store) => {
  const redis = useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(() => Promise.all(closers.splice(0).map((close) => close())));

  it('is gone: the board lists nothing under the key, and another limit is taken', async () => {
    const locks = new InMemoryLocks();
    const module = store === 'redis' ? RedisLockModule.forRoot({ redis: redisUrl() }) : RedisLockTestingModule.forRoot({ locks });
    const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    const service = moduleRef.get(LockService);
    const manager = service[LOCK_RUNNER] as LockManager;
    const held = await service.acquire('export', { limit: 2, waitTimeout: 0 });
    if (store === 'memory') locks.delete('export');
    else await redis.del(...(await redis.keys('*{export}*')).filter((name) => name.endsWith(':holders') || name.includes(':permit:')));

    expect((await listLocks(manager, '0', 100)).locks.filter((lock) => lock.key === 'export')).toEqual([]);
    const again = await service.acquire('export', { limit: 3, waitTimeout: 0 });
    await again.release();
    await held.release().catch(() => undefined);
  });
});
