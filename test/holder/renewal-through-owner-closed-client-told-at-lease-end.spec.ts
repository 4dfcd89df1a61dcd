import { describe, expect, it } from 'vitest';
import { LockLostError, RedisLockError, type LockEvent } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { OWNER_CLOSED_CLIENTS } from '../support/owner-closed-clients.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * Found by review (drivers). A held lock on a client handed in that its owner closed while the
 * application runs (ioredis' quit() or disconnect(), node-redis' close(), GLIDE's close()) was
 * renewed again at every tick, each refusal ("Connection is closed.", "The client is closed",
 * GLIDE's ClosingError) logged as "retrying until their lease deadlines", and its holder told only
 * as the lease ran out, reason 'expired' (Redis unreachable or the event loop blocked). A lock
 * call on such a client ends at its first attempt, naming the closed client (see
 * test/api/acquire-refused-for-good-retried-until-wait-timeout.spec.ts), and a renewal refused
 * for good (NOPERM, an unknown command) loses the lock at once since a358b42: the holder is now
 * told at the first renewal the closed client refuses, reason 'refused', the cause naming the
 * closed client and what to do. Shown by the lease still running in Redis, not by time.
 */
describe('a held lock whose client handed in its owner closed', () => {
  const server = useOwnServer();

  for (const [label, open] of Object.entries(OWNER_CLOSED_CLIENTS)) {
    it(`is lost at the first renewal refused, naming the closed client (${label})`, { timeout: 30_000 }, async () => {
      const { client, close } = await open(server.url());
      const app = await createLockApp({ redis: client, shutdownTimeout: 1_000 });
      const key = `renewal-closed:${label}`;
      const lost: LockEvent[] = [];
      const subscription = app.locks.events$.subscribe((event) => event.type === 'lost' && lost.push(event));
      try {
        // A lease of a minute renewed every 200 ms: on main the loss came only as the minute ran out.
        const lock = await app.locks.acquire(key, { ttl: 60_000, renewInterval: 200 });
        await close();
        await expect.poll(() => lock.signal.aborted, { timeout: 10_000 }).toBe(true);
        expect(await server.admin().pttl(`lock:{${key}}`)).toBeGreaterThan(0);
        const error = lock.signal.reason as LockLostError;
        expect(error).toBeInstanceOf(LockLostError);
        expect(error.reason).toBe('refused');
        expect(error.message).toMatch(/client was closed/);
        expect(error.cause).toBeInstanceOf(RedisLockError);
        expect(lost).toMatchObject([{ type: 'lost', key, reason: 'refused' }]);
        expect(app.logs.has('warn', 'retrying until their lease deadlines')).toBe(false);
      } finally {
        subscription.unsubscribe();
        await app.close();
        await server.admin().del(`lock:{${key}}`);
      }
    });
  }
});
