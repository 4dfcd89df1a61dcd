import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError } from '../lib/index.js';
import { nextEvent } from './support/lock-app.js';
import { leaseDeadline } from './support/mechanism.js';
import { nodeRedisClient, nodeRedisLockApp, type NodeRedisVersion } from './support/node-redis.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

/** These tests stop Redis, so they get a server of their own. */
describe.each([6, 5] as NodeRedisVersion[])('when Redis goes away under a node-redis %i client', (version) => {
  let server: RedisServer;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    server = await startRedisServer();
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await server.stop();
  });

  it('aborts the signal at the lease deadline, fails waits clearly, and works again (scripts reloaded) once Redis is back', { timeout: 30_000 }, async () => {
    const app = await nodeRedisLockApp([await nodeRedisClient(server.url, version)], { ttl: 1_000, renewInterval: 300 });
    try {
      const lock = await app.locks.acquire('k');
      await nextEvent(app.locks.events$, 'renewed');
      const aborted = new Promise<number>((resolve) => lock.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
      const killedAt = performance.now();
      await server.stop({ kill: true });
      const abortedAt = await aborted;
      // By the deadline timer, at the deadline the last renewal (started before the kill) set.
      expect(abortedAt).toBeGreaterThanOrEqual(leaseDeadline(lock));
      expect(leaseDeadline(lock) - killedAt).toBeLessThan(1_000);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lock.signal.reason).toMatchObject({ reason: 'expired' });

      const waiting = await app.locks.acquire('other', { waitTimeout: 300 }).catch((error: unknown) => error);
      expect(waiting).toBeInstanceOf(LockNotAcquiredError);
      expect((waiting as Error).message).toMatch(/Redis did not answer/);

      // The server comes back empty: no lock, and no cached script (EVALSHA falls back to EVAL).
      await server.start();
      const again = await app.locks.acquire('k', { waitTimeout: 10_000 });
      expect(again.held).toBe(true);
      await again.release();
      await lock.release().catch(() => undefined);
      expect(unhandled).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
