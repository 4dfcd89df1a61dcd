import { describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp } from '../support/lock-app.js';
import { OWNER_CLOSED_CLIENTS } from '../support/owner-closed-clients.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review (drivers), after b372a25. A client handed in that the application closed
 * before the lock module's shutdown (in an onModuleDestroy) refuses every give-back at once, and
 * shutdown sent the releases owed on it again and again, each refused at once, until
 * shutdownTimeout ran out: app.close() took that whole time (a minute, say), for locks that could
 * never be given back on that client. Once the client is known closed, nothing is sent again: the
 * close ends at once, and says in one line which locks stay in Redis until their ttl. Shown by
 * the count of releases sent, under a shutdownTimeout far above the test's own timeout.
 */
describe('a client handed in, closed by its owner before app.close()', () => {
  const own = useOwnRedis();

  for (const [label, open] of Object.entries(OWNER_CLOSED_CLIENTS)) {
    it(`sends no release again and ends the close at once, saying the lock stays until its ttl (${label})`, { timeout: 20_000 }, async () => {
      const { client, close } = await open(own.url());
      const app = await createLockApp({ redis: client, shutdownTimeout: 60_000 });
      const key = `closed-first:${label}`;
      const manager = app.locks[LOCK_RUNNER] as unknown as { releaseInRedis: (...args: unknown[]) => Promise<unknown> };
      const releaseInRedis = manager.releaseInRedis;
      let sent = 0;
      manager.releaseInRedis = function (this: unknown, ...args: unknown[]) {
        sent++;
        return releaseInRedis.apply(this, args);
      };
      try {
        await app.locks.acquire(key, { ttl: 30_000 });
        await close();
        let closed = false;
        void app.close().then(() => (closed = true));
        // The shutdown's own give-back, refused at once; then nothing (on main: sent again until shutdownTimeout).
        await expect.poll(() => ({ closed, sent }), { timeout: 10_000 }).toEqual({ closed: true, sent: 1 });
        const told = app.logs.lines.filter((line) => line.message.includes('were not sent again')).map((line) => line.message);
        expect(told).toHaveLength(1);
        expect(told[0]).toContain(JSON.stringify(`lock:{${key}}`));
        // As the line says: nothing could give it back.
        expect(await own.redis().pttl(`lock:{${key}}`)).toBeGreaterThan(0);
      } finally {
        await own.redis().del(`lock:{${key}}`);
      }
    });
  }
});
