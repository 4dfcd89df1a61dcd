/**
 * Guards the fix of 1fbcbb1 (KEEP_FENCE) beyond the one server with ioredis its spec covers:
 * a Cluster (ioredis, node-redis, GLIDE) and one server with node-redis, GLIDE and iovalkey.
 * Each pushes a fencing counter's expiry on to the retention.
 */
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { LockService } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { handedLockApp, openClient } from '../support/handed-clients.js';
import { nodeRedisClient, nodeRedisCluster, nodeRedisLockApp } from '../support/node-redis.js';
import { useRedisCluster } from '../support/redis-cluster.js';
import { redisUrl, useRedis } from '../support/redis.js';

const fence = lockRedisKeys('lock:', 'pushed').fence;
const manager = (locks: LockService): LockManager => locks[LOCK_RUNNER] as unknown as LockManager;

async function pushes(app: LockApp, pexpire: (ms: number) => Promise<unknown>, pttl: () => Promise<number>): Promise<number> {
  try {
    const lock = await app.locks.acquire('pushed');
    await pexpire(5_000); // as if the token had been handed out 55 s ago
    await manager(app.locks).store.keepFence!(fence);
    const left = await pttl();
    await lock.release();
    return left;
  } finally {
    await app.close();
  }
}

describe('KEEP_FENCE on a Cluster', () => {
  const rc = useRedisCluster();
  const check = (app: LockApp) => pushes(app, (ms) => rc.admin.pexpire(fence, ms), () => rc.admin.pttl(fence));

  it('ioredis', async () => {
    const client = new Cluster(rc.cluster.nodes);
    try {
      expect(await check(await createLockApp({ redis: client as never, fenceRetention: '60s' }))).toBeGreaterThan(50_000);
    } finally {
      client.disconnect();
    }
  });
  it('node-redis', async () => {
    expect(await check(await nodeRedisLockApp([await nodeRedisCluster(rc.cluster.nodes)], { fenceRetention: '60s' }))).toBeGreaterThan(50_000);
  });
  it('GLIDE', async () => {
    expect(await check(await handedLockApp(await openClient('GLIDE', rc.cluster.nodes), { fenceRetention: '60s' }))).toBeGreaterThan(50_000);
  });
});

describe('KEEP_FENCE on one server, other drivers', () => {
  const redis = useRedis();
  const check = (app: LockApp) => pushes(app, (ms) => redis.pexpire(fence, ms), () => redis.pttl(fence));
  it('node-redis', async () => {
    expect(await check(await nodeRedisLockApp([await nodeRedisClient(redisUrl())], { fenceRetention: '60s' }))).toBeGreaterThan(50_000);
  });
  it('GLIDE', async () => {
    expect(await check(await handedLockApp(await openClient('GLIDE', redisUrl()), { fenceRetention: '60s' }))).toBeGreaterThan(50_000);
  });
  it('iovalkey', async () => {
    expect(await check(await handedLockApp(await openClient('iovalkey', redisUrl()), { fenceRetention: '60s' }))).toBeGreaterThan(50_000);
  });
});
