import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { usePartialCluster } from './support/redis-cluster.js';
import { handedLockApp, openClient } from './support/handed-clients.js';
import type { LockApp } from './support/lock-app.js';
import { countAttempts, releaseBetweenPolls } from './support/mechanism.js';
import { shardSubscribers } from './support/redis.js';

/**
 * Found by review (GLIDE Cluster): release-notifier.ts promises "a master that does not answer holds up
 * only the waiters of its own locks". With one master frozen (cluster-require-full-coverage no),
 * a waiter on a healthy master's lock must still be subscribed there and woken by the release
 * message.
 */
describe('GLIDE Cluster: a frozen master and the subscriptions on the others', () => {
  const partial = usePartialCluster();
  const { keyOn } = partial;

  /**
   * `holder` holds `key` (on the master `healthy` is connected to), `waiter` waits for it: the
   * waiter is subscribed there, and the release wakes it by its message, with no poll between.
   */
  async function wokenByMessage(holder: LockApp, waiter: LockApp, healthy: Redis, key: string): Promise<void> {
    const held = await holder.locks.acquire(key);
    const attempts = countAttempts(waiter.locks);
    const waiting = waiter.locks.acquire(key, { waitTimeout: 30_000 });
    waiting.catch(() => undefined);
    await expect.poll(() => shardSubscribers(healthy, `lock:{${key}}:released`), { timeout: 15_000 }).toBe(1);
    const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting, 'watching');
    expect(attemptsSinceRelease).toBe(0);
    await next.release();
  }

  it('a waiter on a healthy master is subscribed and woken by the release message', { timeout: 60_000 }, async () => {
    const holder = await handedLockApp(await openClient('GLIDE', partial.cluster.nodes), { ttl: 30_000 });
    const waiter = await handedLockApp(await openClient('GLIDE', partial.cluster.nodes));
    const healthy = new Redis(partial.cluster.nodes[0]!.port, partial.cluster.nodes[0]!.host);
    const frozen = new Redis(partial.cluster.nodes[2]!.port, partial.cluster.nodes[2]!.host);
    try {
      // A waiter on master 2's lock, subscribed there; then master 2 freezes.
      const onFrozen = await keyOn(2, 'frozen');
      const heldThere = await holder.locks.acquire(onFrozen);
      const waitingThere = waiter.locks.acquire(onFrozen, { waitTimeout: 30_000 }).catch((error: unknown) => error);
      await expect.poll(() => shardSubscribers(frozen, `lock:{${onFrozen}}:released`), { timeout: 5_000 }).toBe(1);
      partial.cluster.pause(2);
      // A waiter on master 0's lock.
      await wokenByMessage(holder, waiter, healthy, await keyOn(0, 'healthy'));
      void heldThere;
      void waitingThere;
    } finally {
      partial.cluster.resume(2);
      healthy.disconnect();
      frozen.disconnect();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
  for (const how of ['frozen', 'killed'] as const) {
    it(`master 2 ${how} before the process's first waiter: a waiter on a healthy master is subscribed and woken by the release message`, { timeout: 60_000 }, async () => {
      const holder = await handedLockApp(await openClient('GLIDE', partial.cluster.nodes), { ttl: 30_000 });
      const waiter = await handedLockApp(await openClient('GLIDE', partial.cluster.nodes));
      const healthy = new Redis(partial.cluster.nodes[0]!.port, partial.cluster.nodes[0]!.host);
      try {
        const onHealthy = await keyOn(0, `first-${how}`);
        if (how === 'frozen') partial.cluster.pause(2);
        else await partial.cluster.kill(2);
        await wokenByMessage(holder, waiter, healthy, onHealthy);
      } finally {
        partial.cluster.resume(2);
        healthy.disconnect();
        await Promise.all([holder.close(), waiter.close()]);
      }
    });
  }

});
