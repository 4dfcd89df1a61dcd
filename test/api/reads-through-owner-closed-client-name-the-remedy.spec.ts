import { describe, expect, it } from 'vitest';
import { RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { OWNER_CLOSED_CLIENTS } from '../support/owner-closed-clients.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review of the HTTP answers. An isLocked() or inspect() on a client handed in that its
 * owner closed while the application ran said only "Redis could not be asked (Connection is
 * closed)" (or the driver's own words): a 500 without what to fix, where tryAcquire() on the same
 * client says the client was closed and to close it only after the module shut down (in
 * onApplicationShutdown). Both reads say so now, as tryAcquire() does, and stay a fault to fix
 * (a plain RedisLockError, 500), not a Redis that passes (503).
 */
describe('reads through a client handed in that its owner closed', () => {
  for (const [label, open] of Object.entries(OWNER_CLOSED_CLIENTS)) {
    it(`isLocked() and inspect() name the closed client and what to do (${label})`, { timeout: 30_000 }, async () => {
      const owned = await open(redisUrl());
      const app: LockApp = await createLockApp({ redis: owned.client, shutdownTimeout: 1_000 });
      try {
        await expect.poll(() => app.locks.isLocked('read-closed').catch(() => undefined)).toBe(false);
        await owned.close();
        for (const [call, read] of [
          ['isLocked', () => app.locks.isLocked('read-closed')],
          ['inspect', () => app.locks.inspect('read-closed')],
        ] as const) {
          const error = await (read() as Promise<unknown>).then(
            (value) => value,
            (caught: unknown) => caught,
          );
          expect(error).toBeInstanceOf(RedisLockError);
          expect(error).not.toBeInstanceOf(RedisUnavailableError);
          expect((error as Error).message).toMatch(new RegExp(`^${call}\\("read-closed"\\): the Redis client was closed[\\s\\S]*onApplicationShutdown`));
        }
      } finally {
        await app.close();
      }
    });
  }
});
