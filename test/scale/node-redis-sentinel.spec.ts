import { Redis } from 'ioredis';
import { createSentinel as createSentinel6 } from 'redis';
import { createSentinel as createSentinel5 } from 'redis5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { sleep } from '../support/lock-app.js';
import { countAttempts, releaseBetweenPolls } from '../support/mechanism.js';
import { nodeRedisLockApp, type Factory } from '../support/node-redis.js';
import { subscribers } from '../support/redis.js';

describe('Redis Sentinel through a node-redis Sentinel client (master, replica, 3 sentinels)', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  const sentinelClient = async (create: Factory) => {
    const client = create({ name: deployment.name, sentinelRootNodes: deployment.sentinels });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };

  it.each([
    [6, createSentinel6 as unknown as Factory],
    [5, createSentinel5 as unknown as Factory],
  ] as const)('acquires on the master, wakes a waiter with the release message and releases (node-redis %i)', async (_version, create) => {
    const holder = await nodeRedisLockApp([await sentinelClient(create)], { ttl: 20_000 });
    const waiter = await nodeRedisLockApp([await sentinelClient(create)]);
    const master = new Redis(await deployment.masterPortNow(), '127.0.0.1');
    try {
      const held = await holder.locks.acquire(`sentinel:${_version}`);
      expect(await master.exists(`lock:{sentinel:${_version}}`)).toBe(1);
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(`sentinel:${_version}`, { waitTimeout: 15_000 });
      await expect.poll(() => subscribers(master, `lock:{sentinel:${_version}}:released`), { timeout: 5_000 }).toBe(1);
      const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      // Woken by the release message: a poll would have made an attempt.
      expect(attemptsSinceRelease).toBe(0);
      expect(next.fencingToken).toBe(held.fencingToken + 1);
      await next.release();
      expect(await master.exists(`lock:{sentinel:${_version}}`)).toBe(0);
      expect(await holder.locks.inspect(`sentinel:${_version}`)).toMatchObject({ held: false, fencingToken: next.fencingToken });
    } finally {
      master.disconnect();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  it('follows a failover: a replicated lock stays held and is renewed on the new master, new locks work (node-redis 6)', { timeout: 60_000 }, async () => {
    const app = await nodeRedisLockApp([await sentinelClient(createSentinel6 as unknown as Factory)], { ttl: 3_000, renewInterval: 300 });
    try {
      const kept = await app.locks.acquire('failover:kept');
      const oldPort = await deployment.masterPortNow();
      const replica = new Redis(oldPort === deployment.masterPort ? deployment.replicaPort : deployment.masterPort, '127.0.0.1');
      // The write reached the replica before it is promoted.
      await expect.poll(() => replica.exists('lock:{failover:kept}'), { timeout: 10_000 }).toBe(1);
      replica.disconnect();
      const newPort = await deployment.failover();
      expect(newPort).not.toBe(oldPort);
      const promoted = new Redis(newPort, '127.0.0.1');
      try {
        // Longer than the whole lease: only renewals on the new master keep the lock there.
        await sleep(3_500);
        expect(kept.held).toBe(true);
        expect(await promoted.pttl('lock:{failover:kept}')).toBeGreaterThan(0);
        const after = await app.locks.acquire('failover:after', { waitTimeout: 10_000 });
        expect(await promoted.exists('lock:{failover:after}')).toBe(1);
        await after.release();
        await kept.release();
        expect(await promoted.exists('lock:{failover:kept}')).toBe(0);
      } finally {
        promoted.disconnect();
      }
    } finally {
      await app.close();
    }
  });
});
