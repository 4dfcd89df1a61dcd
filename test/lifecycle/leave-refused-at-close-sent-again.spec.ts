/**
 * A review's suspicion (after 5017905, which sends a *release* refused during `app.close()` again
 * until `shutdownTimeout` ends): the *leave* that shutdown sends for a caller still waiting, or
 * for an acquire whose reply had not come, is sent once (LockManager.leave: two fire-and-forget
 * sends, no resend). When Redis refuses that one call (a failover under way answers READONLY)
 * and then takes writes again while `shutdownTimeout` still has time, `app.close()` resolves
 * leaving behind what the leave was to take away: the waiter's place in the queue (a release
 * hands the lock to the gone waiter for a grant lease), or, worse, the lock an acquire in flight
 * took, for its whole ttl, while every waiter on another instance waits it out.
 *
 * Faults: the server turns replica of a master that is not there (it keeps its data and answers
 * READONLY to writes, as an old master does mid-failover) and back; a proxy holds Redis's replies
 * to the application so that its acquire has run in Redis when close() starts, with the reply
 * still on its way. The refusals are counted from Redis's own command stats, never timed.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';

/** EVAL calls Redis refused or failed (READONLY): at shutdown leaves and releases go as EVAL. */
async function refusedEvals(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  const line = stats.split('\r\n').find((entry) => entry.startsWith('cmdstat_eval:'));
  if (line === undefined) return 0;
  const field = (name: string): number => Number(new RegExp(`${name}=(\\d+)`).exec(line)?.[1] ?? 0);
  return field('rejected_calls') + field('failed_calls');
}

describe('app.close() while Redis refuses the leave of a caller for a moment', () => {
  const own = useOwnRedis();

  it('takes a waiter queued in Redis out of the queue once Redis takes writes again, within shutdownTimeout', { timeout: 30_000 }, async () => {
    const admin = own.redis();
    const holder = await createLockApp({ redis: own.url(), ttl: '30s' });
    const app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '5s' });
    try {
      await holder.locks.acquire('deploy');
      const call = app.locks.acquire('deploy', { waitTimeout: '20s' }).then(
        () => 'acquired',
        (error: Error) => error.constructor.name,
      );
      await expect.poll(() => admin.zcard('lock:{deploy}:waiters')).toBe(1);
      await admin.config('RESETSTAT');
      await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
      const closed = app.close();
      // The leave went out and Redis refused it.
      await expect.poll(() => refusedEvals(admin)).toBeGreaterThanOrEqual(1);
      // Redis takes writes again, well within shutdownTimeout (5 s).
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await closed;
      expect(await call).not.toBe('acquired');
      // Nothing of the gone waiter is left in Redis for a release to hand the lock to.
      expect({ queue: await admin.lrange('lock:{deploy}:queue', 0, -1), waiters: await admin.zrange('lock:{deploy}:waiters', 0, -1) }).toEqual({ queue: [], waiters: [] });
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await holder.close();
    }
  });

  it('gives back the lock an acquire in flight took, its reply still on the way, once Redis takes writes again', { timeout: 30_000 }, async () => {
    const admin = own.redis();
    const proxy = await TcpProxy.start(Number(new URL(own.url()).port));
    const app = await createLockApp({ redis: proxy.url, ttl: '30s', shutdownTimeout: '5s' });
    try {
      await (await app.locks.acquire('warm-up')).release();
      await admin.config('RESETSTAT');
      proxy.holdReplies();
      const call = app.locks.acquire('deploy').then(
        () => 'acquired',
        (error: Error) => error.constructor.name,
      );
      // The acquire ran in Redis and took the lock; its reply waits in the proxy.
      await expect.poll(() => admin.exists('lock:{deploy}')).toBe(1);
      await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
      const closed = app.close();
      // The leave (sent at once, behind the acquire) was refused.
      await expect.poll(() => refusedEvals(admin)).toBeGreaterThanOrEqual(1);
      // The acquire's reply comes: the leave goes out again behind it, and is refused too.
      proxy.flushReplies();
      await expect.poll(() => refusedEvals(admin)).toBeGreaterThanOrEqual(2);
      // Redis takes writes again, well within shutdownTimeout (5 s).
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await closed;
      expect(await call).toBe('LockNotAcquiredError');
      // The mechanism: the acquire took the lock in Redis (it made the key's fencing counter).
      expect(await admin.exists('lock:{deploy}:fence')).toBe(1);
      expect({ held: await admin.exists('lock:{deploy}'), pttl: await admin.pttl('lock:{deploy}') }).toEqual({ held: 0, pttl: -2 });
    } finally {
      proxy.flushReplies();
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await proxy.close();
    }
  });
});
