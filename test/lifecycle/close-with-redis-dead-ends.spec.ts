/**
 * Guards the fix of 5017905 when Redis is gone for good: app.close() with held locks (a mutex,
 * a permit, a read lock) and a release that failed before the close still ends (within its
 * shutdownTimeout: polled generously here, not bounded), leaves no handle keeping the process up.
 */
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { startRedisServer } from '../support/redis-server.js';

describe('app.close() with Redis killed', () => {
  for (const kill of [true, false]) {
    it(`ends, with Redis ${kill ? 'killed' : 'paused'}`, { timeout: 60_000 }, async () => {
      const server = await startRedisServer();
      try {
        const app = await createLockApp({ redis: server.url, ttl: '30s', shutdownTimeout: '1s' });
        await app.locks.acquire('a');
        await app.locks.acquire('sem', { limit: 2 });
        await app.locks.acquire('doc', { mode: 'read' });
        const early = await app.locks.acquire('early');
        if (kill) await server.stop({ kill: true });
        else server.pause();
        void early.release().catch(() => undefined);
        const startedAt = Date.now();
        let closed = false;
        const closing = app.close().then(() => (closed = true));
        await expect.poll(() => closed, { timeout: 30_000, interval: 100 }).toBe(true);
        await closing;
        console.log('close took', Date.now() - startedAt, 'ms');
      } finally {
        server.resume();
        await server.stop({ kill: true }).catch(() => undefined);
      }
    });
  }
});
