import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review of a56267c, which ends an acquire() a majority of the masters refused for good
 * (EVALSHA and EVAL renamed on them) at its first attempt. The call then gives back what that
 * attempt may have taken, as every call whose attempt had no clear answer does; on one Redis a
 * give-back refused alike is not sent again (d2f5e3e). In quorum mode it was: the masters' refusal
 * reached the engine as "Quorum not reached to give back the lock", which it takes for passing, so
 * the give-back was kept and sent again, refused each time, until the lock's ttl ran out, and at
 * app.close() until shutdownTimeout. It is dropped now, once refused. Shown by what the
 * application keeps to send again once the call's clean-ups are done, not by time.
 */
describe('quorum: a give-back refused for good by a majority of the masters', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    const renamed = ['--rename-command', 'EVALSHA', '', '--rename-command', 'EVAL', ''];
    servers.push(await startRedisServer(renamed), await startRedisServer(renamed), await startRedisServer());
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('is not sent again', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: servers.map((server) => server.url) as never, shutdownTimeout: 2_000 });
    const manager = app.locks[LOCK_RUNNER] as unknown as { pendingCleanups: Set<unknown>; unconfirmed: { pending: Map<string, unknown> } };
    try {
      const error = await app.locks.acquire('give-back-refused', { ttl: 60_000, waitTimeout: 4_000 }).then(
        (lock) => lock,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RedisLockError);
      expect((error as Error).message).toMatch(/Quorum[\s\S]*2 of 3[\s\S]*rename-command/);
      // The call's give-backs have been answered (refused by two masters)...
      await expect.poll(() => manager.pendingCleanups.size).toBe(0);
      // ...and none is kept to send again (on main: one, until the minute's ttl ran out).
      expect(manager.unconfirmed.pending.size).toBe(0);
    } finally {
      await app.close();
    }
  });
});
