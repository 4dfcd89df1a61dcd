import { describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { OWNER_CLOSED_CLIENTS } from '../support/owner-closed-clients.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review (drivers). docs/configuration.md: a client handed in is its owner's to close, in
 * `onApplicationShutdown`, after the module gave its locks back in `beforeApplicationShutdown`.
 * An application that closes it before (in an `onModuleDestroy`, the usual place for a Redis
 * provider's `quit()`) leaves the module a closed client: every give-back is refused at once
 * ("Connection is closed.", "The client is closed", GLIDE's ClosingError), and sent again until
 * `shutdownTimeout` ran out. `app.close()` took that whole time, the locks stayed in Redis until
 * their ttl (every other instance locked out of their keys meanwhile), and nothing said why: the
 * log held "still held at shutdown; releasing it." and nothing after it. The module now says, as
 * its shutdown begins, which client was closed, what it costs and where to close it instead.
 */
describe('a client handed in, closed by its owner before app.close()', () => {
  const own = useOwnRedis();

  for (const [label, open] of Object.entries(OWNER_CLOSED_CLIENTS)) {
    it(`says nothing of it when the client is still open, and gives the lock back (${label})`, { timeout: 20_000 }, async () => {
      const { client, close } = await open(own.url());
      const app = await createLockApp({ redis: client, shutdownTimeout: 600 });
      const key = `open-at-close:${label}`;
      try {
        await app.locks.acquire(key, { ttl: 30_000 });
        await app.close();
        expect(app.logs.lines.filter((line) => line.message.includes('was closed before'))).toEqual([]);
        expect(await own.redis().exists(`lock:{${key}}`)).toBe(0);
      } finally {
        await close();
      }
    });

    it(`says so at shutdown, naming what it costs (${label})`, { timeout: 20_000 }, async () => {
      const { client, close } = await open(own.url());
      let app: LockApp | undefined = await createLockApp({ redis: client, shutdownTimeout: 600 });
      const key = `closed-first:${label}`;
      try {
        await app.locks.acquire(key, { ttl: 30_000 });
        await close();
        await app.close();
        const closing = app.logs.lines.filter((line) => line.level === 'warn' || line.level === 'error').map((line) => line.message);
        app = undefined;
        // The lock is still there, as the warning says: nothing could give it back.
        expect(await own.redis().pttl(`lock:{${key}}`)).toBeGreaterThan(0);
        expect(closing).toContainEqual(expect.stringContaining('The Redis client handed in (redis) was closed before the lock module shut down'));
      } finally {
        await app?.close();
        await own.redis().del(`lock:{${key}}`);
      }
    });
  }
});
