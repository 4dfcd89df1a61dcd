/**
 * ioredis' `disconnect()` ends the socket and waits up to its `disconnectTimeout` (2 s by
 * default, a timer that keeps the process alive) for the socket to close. Found by the chaos
 * suite (`redis-kill.spec.ts`: a holder that lost its lock when Redis was killed took 2 s to
 * exit after app.close()), then by review for a frozen Redis:
 * - killed: a connection waiting to reconnect holds a socket that closed already, whose close
 *   never comes again (redis/ioredis#1247);
 * - frozen (SIGSTOP; a partition is alike): the socket is open, and Redis never closes its side.
 * The library's own connections (its client made from options, its subscriber connection) must
 * let the process exit at once. The fixture's client waits 10 minutes (`disconnectTimeout`), so
 * a connection that waited for ioredis' timer would hold the process that long.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { startRedisServer } from '../support/redis-server.js';

describe('app.close() with Redis down or frozen', () => {
  for (const fault of ['killed', 'frozen'] as const) {
    it(`lets the process exit on its own, Redis ${fault}`, { timeout: 60_000 }, async () => {
      const server = await startRedisServer();
      onTestFinished(async () => {
        server.resume();
        await server.stop({ kill: true }).catch(() => undefined);
      });
      const child = spawnFixture(new URL('./fixtures/close-with-redis-down.mjs', import.meta.url), { REDIS_URL: server.url });
      await expect.poll(() => child.output(), { timeout: 10_000 }).toContain('ready');
      if (fault === 'killed') await server.stop({ kill: true });
      else server.pause();
      child.endWith('go');
      await expect.poll(() => child.output(), { timeout: 10_000 }).toMatch(/closed (\[.*\])/);
      if (fault === 'killed') {
        // No socket left to wait for, so no timer: only the standard streams keep the loop alive.
        const left = JSON.parse(/closed (\[.*\])/.exec(child.output())![1]!) as string[];
        expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
      }
      await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
    });
  }
});
