/**
 * Found by review (s48, obs). `locksLostRecently` of `RedisLockHealthIndicator.isHealthy()` told a
 * multi-key lock's key lost while its call still waited for a later key (not counted: the call
 * takes every key again within its wait) from one lost while the lock was held (counted once) by
 * the number of its keys it had seen `acquired`: fewer than all, still waiting. A key the call
 * re-enters (an outer `using()`'s, a leader's term) takes nothing and emits no `acquired`, so a
 * lock of keys `[a, b]` run within `using(a)` never had all its keys seen: the loss of `b`, while
 * the lock was held and its code ran, read as one during the wait and was not counted, while
 * `lock.lost` counts it (the lock's signal aborts, its other keys are given back).
 *
 * Now a key's loss counts as the lock's unless its call was still taking its other keys.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestingModule } from '@nestjs/testing';
import { LockService, type MultiKeyLock } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { terminusLockModule } from '../support/terminus-app.js';

describe('locksLostRecently and a multi-key lock with a re-entered key', () => {
  const redis = useRedis();
  const opened: { client: Redis; moduleRef: TestingModule }[] = [];
  afterEach(async () => {
    for (const { client, moduleRef } of opened.splice(0)) {
      await moduleRef.close();
      await client.quit();
    }
  });

  it('counts the loss of a key of its own while the lock is held', async () => {
    const client = new Redis(redisUrl());
    const moduleRef = await terminusLockModule(client, { ttl: 600, renewInterval: 100 });
    opened.push({ client, moduleRef });
    const health = moduleRef.get(RedisLockHealthIndicator);
    const locks = moduleRef.get(LockService);
    await health.isHealthy(); // the indicator counts from its first check on
    const reason = await locks.using('reent-a', () =>
      locks.using(['reent-a', 'reent-b'], async (lock: MultiKeyLock) => {
        // A failover that lost its write, an operator's DEL: the lock's own key is gone.
        await redis.del('lock:{reent-b}');
        await expect.poll(() => lock.signal.aborted, { timeout: 5_000 }).toBe(true);
        return lock.signal.reason as { reason?: string };
      }),
    );
    expect(reason).toMatchObject({ key: 'reent-b', reason: 'refused' });
    // Before: 0, the key read as lost while the call still waited for "reent-a".
    expect((await health.isHealthy())['redis-lock'].locksLostRecently).toBe(1);
  });
});
