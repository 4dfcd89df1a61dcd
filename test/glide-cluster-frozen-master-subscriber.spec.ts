import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster } from '../scripts/redis-cluster.mjs';
import { lockNameOnMaster } from './support/redis-cluster.js';
import { handedLockApp, openClient } from './support/handed-clients.js';
import { countAttempts } from './support/mechanism.js';

/**
 * Found by review (GLIDE Cluster): release-notifier.ts promises "a master that does not answer holds up
 * only the waiters of its own locks". With one master frozen (cluster-require-full-coverage no),
 * a waiter on a healthy master's lock must still be subscribed there and woken by the release
 * message.
 */
describe('GLIDE Cluster: a frozen master and the subscriptions on the others', () => {
  let cluster: Awaited<ReturnType<typeof startRedisCluster>>;
  beforeAll(async () => {
    cluster = await startRedisCluster(3, { requireFullCoverage: false });
  }, 60_000);
  afterAll(async () => {
    cluster.resume(2);
    await cluster.stop();
  });

  const keyOn = (index: number, tag: string): Promise<string> => lockNameOnMaster(cluster, index, tag);

  it('a waiter on a healthy master is subscribed and woken by the release message', { timeout: 60_000 }, async () => {
    const holder = await handedLockApp(await openClient('GLIDE', cluster.nodes), { ttl: 30_000 });
    const waiter = await handedLockApp(await openClient('GLIDE', cluster.nodes));
    const healthy = new Redis(cluster.nodes[0]!.port, cluster.nodes[0]!.host);
    const frozen = new Redis(cluster.nodes[2]!.port, cluster.nodes[2]!.host);
    try {
      // A waiter on master 2's lock, subscribed there; then master 2 freezes.
      const onFrozen = await keyOn(2, 'frozen');
      const heldThere = await holder.locks.acquire(onFrozen);
      const waitingThere = waiter.locks.acquire(onFrozen, { waitTimeout: 30_000 }).catch((error: unknown) => error);
      await expect.poll(async () => ((await frozen.call('PUBSUB', 'SHARDNUMSUB', `lock:{${onFrozen}}:released`)) as [string, number])[1], { timeout: 5_000 }).toBe(1);
      cluster.pause(2);
      // A waiter on master 0's lock.
      const onHealthy = await keyOn(0, 'healthy');
      const held = await holder.locks.acquire(onHealthy);
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(onHealthy, { waitTimeout: 30_000 });
      waiting.catch(() => undefined);
      await expect.poll(async () => ((await healthy.call('PUBSUB', 'SHARDNUMSUB', `lock:{${onHealthy}}:released`)) as [string, number])[1], { timeout: 10_000 }).toBe(1);
      await attempts.watching();
      const polled = attempts.count;
      await held.release();
      const next = await waiting;
      expect(attempts.count).toBe(polled);
      await next.release();
      void heldThere;
      void waitingThere;
    } finally {
      cluster.resume(2);
      healthy.disconnect();
      frozen.disconnect();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
  for (const how of ['frozen', 'killed'] as const) {
    it(`master 2 ${how} before the process's first waiter: a waiter on a healthy master is subscribed and woken by the release message`, { timeout: 60_000 }, async () => {
      const holder = await handedLockApp(await openClient('GLIDE', cluster.nodes), { ttl: 30_000 });
      const waiter = await handedLockApp(await openClient('GLIDE', cluster.nodes));
      const healthy = new Redis(cluster.nodes[0]!.port, cluster.nodes[0]!.host);
      try {
        const onHealthy = await keyOn(0, `first-${how}`);
        if (how === 'frozen') cluster.pause(2);
        else await cluster.kill(2);
        const held = await holder.locks.acquire(onHealthy);
        const attempts = countAttempts(waiter.locks);
        const waiting = waiter.locks.acquire(onHealthy, { waitTimeout: 30_000 });
        waiting.catch(() => undefined);
        await expect.poll(async () => ((await healthy.call('PUBSUB', 'SHARDNUMSUB', `lock:{${onHealthy}}:released`)) as [string, number])[1], { timeout: 15_000 }).toBe(1);
        await attempts.watching();
        const polled = attempts.count;
        await held.release();
        const next = await waiting;
        expect(attempts.count).toBe(polled);
        await next.release();
      } finally {
        cluster.resume(2);
        healthy.disconnect();
        await Promise.all([holder.close(), waiter.close()]);
      }
    });
  }

});
