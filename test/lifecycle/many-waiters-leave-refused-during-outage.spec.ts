/**
 * Review of 7d05417 (a refused leave is sent again), at scale while the app runs: fifty waiters
 * of one key give up (their signals abort) while Redis refuses writes (READONLY, a failover).
 * Every leave goes on the unconfirmed list (one retry timer for all); once Redis takes writes
 * again, every gone waiter must leave the queue, well within the resend window, and close()
 * must not be held up by what is left.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

async function refusedEvals(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  let refused = 0;
  for (const line of stats.split('\r\n').filter((entry) => /^cmdstat_eval(sha)?:/.test(entry))) {
    refused += Number(/rejected_calls=(\d+)/.exec(line)?.[1] ?? 0) + Number(/failed_calls=(\d+)/.exec(line)?.[1] ?? 0);
  }
  return refused;
}

describe('many waiters giving up while Redis refuses writes', () => {
  const own = useOwnRedis();

  it('all leave the queue once Redis takes writes again', { timeout: 30_000 }, async () => {
    const admin = own.redis();
    const holder = await createLockApp({ redis: own.url(), ttl: '30s' });
    const app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '2s' });
    try {
      await holder.locks.acquire('deploy');
      const controllers = Array.from({ length: 50 }, () => new AbortController());
      const calls = controllers.map((controller) => app.locks.acquire('deploy', { waitTimeout: '25s', signal: controller.signal }).then(
        () => 'acquired',
        (error: Error) => error.constructor.name,
      ));
      await expect.poll(() => admin.zcard('lock:{deploy}:waiters'), { timeout: 10_000 }).toBe(50);
      await admin.config('RESETSTAT');
      await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
      for (const controller of controllers) controller.abort();
      expect(new Set(await Promise.all(calls))).not.toContain('acquired');
      await expect.poll(() => refusedEvals(admin), { timeout: 10_000 }).toBeGreaterThanOrEqual(50);
      // The mechanism: the gone waiters are all still queued.
      expect(await admin.zcard('lock:{deploy}:waiters')).toBe(50);
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await expect.poll(() => admin.zcard('lock:{deploy}:waiters'), { timeout: 8_000 }).toBe(0);
      expect(await admin.llen('lock:{deploy}:queue')).toBe(0);
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await app.close();
      await holder.close();
    }
  });
});
