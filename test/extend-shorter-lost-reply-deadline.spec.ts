import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { useLockApps } from './support/lock-app.js';
import { leaseDeadline } from './support/mechanism.js';

/**
 * Review (engine, holding side).
 *
 * Promise (docs/locks.md, `held` / `extend(ttl)`; held-lock.ts constructor comment): a lock is
 * never reported held past a moment its lease could have run out in Redis; its local deadline
 * is counted from before the command that set the lease was sent. `extend(ttl)` with a shorter
 * ttl makes the lease in Redis `ttl` long from the moment the renewal runs there.
 *
 * Behaviour: `extend(shorter)` (held-lock.ts, `extend`) and the watchdog renewals that follow
 * it at the new, shorter ttl only move the local deadline when their reply is applied
 * (`completeRenewal`). While such a renewal is unanswered, or when its reply is lost (a command
 * timeout, a connection reset, in quorum mode "not enough Redis nodes answered"), Redis may
 * already have cut the lease to the short ttl, but the lock keeps its old, long deadline: it is
 * reported held (and hands out its fencing token) for up to the whole old ttl after the key
 * can have expired in Redis and been taken by another process.
 *
 * Here: a 60 s lock (no watchdog); Redis stops answering (SIGSTOP) and extend(1 s) is sent; the client's
 * commandTimeout rejects it. The renewal then runs when Redis comes back (PTTL <= 1 s), while
 * the local deadline read before that still said "about 59 s left".
 */
describe('review: extend() to a shorter ttl whose reply is lost', () => {
  let server: RedisServer;
  let admin: Redis;
  const app = useLockApps();

  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    server?.resume();
    await admin?.quit();
    await server?.stop();
  });

  it('never keeps a local deadline later than the shortened lease Redis may already hold', async () => {
    // No watchdog, so that only extend() touches the lease in Redis.
    const { locks } = await app({ redis: { host: '127.0.0.1', port: server.port, commandTimeout: 300 }, ttl: 60_000, autoRenew: false, shutdownTimeout: 500 });
    const lock = await locks.acquire('extend-shorter-lost');
    // The renew script is loaded (a later EVALSHA runs as is).
    await lock.extend();
    server.pause();
    try {
      const extended = lock.extend(1_000);
      // The renewal (PEXPIRE 1000) is on its way to Redis: it was sent no later than now.
      const sentBy = performance.now();
      await expect(extended).rejects.toThrow();
      // Redis may run that renewal any moment now (it will, once it answers again): the lease
      // there can end 1 s after it was sent. The lock must not be trusted past that.
      expect(lock.held).toBe(true);
      // (Soft, so that the run also shows the consequence below.)
      expect.soft(leaseDeadline(lock)).toBeLessThanOrEqual(sentBy + 1_000);
    } finally {
      server.resume();
    }
    // And it does run: the lease in Redis becomes the short one, which the local deadline never accounted for.
    await expect.poll(async () => admin.pttl('lock:{extend-shorter-lost}')).toBeLessThanOrEqual(1_000);
    await lock.release().catch(() => undefined);
  });
});
