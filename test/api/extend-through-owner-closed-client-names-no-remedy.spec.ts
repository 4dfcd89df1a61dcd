import { describe, expect, it } from 'vitest';
import { RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { OWNER_CLOSED_CLIENTS } from '../support/owner-closed-clients.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by a defect hunt (s48). The extend() of a lock held through a client handed in that its
 * owner closed while the application ran said only "could not be extended: Redis could not be
 * asked (Connection is closed)" (or the driver's own words), where tryAcquire(), isLocked() and
 * inspect() on the same client (86a9eca) say the client was closed and to close it only after the
 * module shut down (in onApplicationShutdown). extend() says so now, and stays a fault to fix
 * (a plain RedisLockError), not a Redis that passes.
 */
describe('extend() through a client handed in that its owner closed', () => {
  for (const [index, [label, open]] of Object.entries(OWNER_CLOSED_CLIENTS).entries()) {
    it(`names the closed client and what to do (${label})`, { timeout: 30_000 }, async () => {
      const owned = await open(redisUrl());
      const app: LockApp = await createLockApp({ redis: owned.client, shutdownTimeout: 1_000 });
      try {
        // Single and multi-key: the watchdog's first renewal is a ttl / 3 (10 s) away. A key of its
        // own per client: a closed client gives nothing back, so its locks stay until their ttl.
        const key = `extend-closed-${index}`;
        const single = await app.locks.acquire(key);
        const multi = await app.locks.acquire([`${key}:a`, `${key}:b`]);
        await owned.close();
        for (const lock of [single, multi]) {
          const error = await lock.extend().then(
            () => 'extended',
            (caught: unknown) => caught,
          );
          expect(error).toBeInstanceOf(RedisLockError);
          expect(error).not.toBeInstanceOf(RedisUnavailableError);
          expect((error as Error).message).toMatch(new RegExp(`^Lock "${key}(:a)?" could not be extended: the Redis client was closed[\\s\\S]*onApplicationShutdown[\\s\\S]*it is still held until its lease deadline\\.$`));
        }
      } finally {
        await app.close();
      }
    });
  }
});
