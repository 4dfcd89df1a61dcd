/**
 * Defect: `locksLostRecently` of `RedisLockHealthIndicator.isHealthy()` counted the `lost` events
 * of `events$`, which come per key: a multi-key lock whose keys all went (a FLUSHDB, a failover
 * to a replica that lacked them, eviction) read as three locks lost for one, and a key lost while
 * an `acquire([...keys])` still waited for a later key (every key is then taken again within the
 * wait, and the caller gets a held lock) read as a lock lost, though no caller lost anything.
 * The lock metrics count either as the caller sees it (docs/observability.md: one `lock.lost`
 * per multi-key lock, none for a key lost before the lock was had).
 *
 * Now a multi-key lock counts once, when it is lost while held, as it does in `lock.lost`.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestingModule } from '@nestjs/testing';
import { LockService } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { nextEvent, useLockApps } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { terminusLockModule } from '../support/terminus-app.js';

describe('locksLostRecently and multi-key locks', () => {
  const redis = useRedis();
  const app = useLockApps();
  const opened: { client: Redis; moduleRef: TestingModule }[] = [];
  afterEach(async () => {
    for (const { client, moduleRef } of opened.splice(0)) {
      await moduleRef.close();
      await client.quit();
    }
  });

  async function start(): Promise<{ locks: LockService; lostRecently: () => Promise<unknown> }> {
    const client = new Redis(redisUrl());
    const moduleRef = await terminusLockModule(client, { ttl: 600, renewInterval: 100, waitTimeout: 10_000 });
    opened.push({ client, moduleRef });
    const health = moduleRef.get(RedisLockHealthIndicator);
    await health.isHealthy(); // the indicator counts from its first check on
    return { locks: moduleRef.get(LockService), lostRecently: async () => (await health.isHealthy())['redis-lock'].locksLostRecently };
  }

  it('counts a multi-key lock whose every key went as one lock lost', async () => {
    const { locks, lostRecently } = await start();
    const lock = await locks.acquire(['acct:a', 'acct:b', 'acct:c']);
    // Each key ends on its own (its renewal refused, or given back once another key was lost).
    const ended = new Set<string>();
    const watching = locks.events$.subscribe((event) => (event.type === 'lost' || event.type === 'released') && ended.add(event.key));
    await redis.flushdb();
    await expect.poll(() => ended.size, { timeout: 5_000 }).toBe(3);
    watching.unsubscribe();
    expect(await lostRecently()).toBe(1);
    await lock.release().catch(() => undefined);
  });

  it('counts no loss for a key lost while the call still waited for a later one', async () => {
    const holder = await app();
    const { locks, lostRecently } = await start();
    const b = await holder.locks.acquire('acct:b');
    const lostA = nextEvent(locks.events$, 'lost');
    const pending = locks.acquire(['acct:a', 'acct:b']);
    await expect.poll(async () => (await holder.locks.inspect('acct:b')).waiters).toBe(1);
    await redis.del('lock:{acct:a}');
    expect((await lostA).key).toBe('acct:a');
    await b.release();
    const lock = await pending;
    expect(lock.held).toBe(true);
    expect(await lostRecently()).toBe(0);
    await lock.release();
  });
});
