/**
 * Found by review. node-redis (5 and 6) handed in: the library subscribes to release channels on
 * a `duplicate()` of the client, a connection of its own, with the client's reconnect strategy.
 * node-redis waits between reconnection attempts on `await setTimeout(retryIn)` from
 * `timers/promises` (@redis/client's RedisSocket#connect), a timer that keeps the process alive
 * and that `destroy()` cannot clear: the library's `close()` of the subscriber destroys the
 * duplicate, and the process then lives on until the attempt was due (up to 2.2 s with
 * node-redis' default strategy, the strategy's delay with the application's own). The driver
 * now reconnects that duplicate itself, on a timer its close clears (`reconnectDelay`).
 * Here only the library's connection reconnects: Redis drops the pub/sub connection and refuses
 * new ones (`maxclients` reached), the application's client stays connected (checked), and the
 * application destroys it after `app.close()`. Half a second after the close, nothing but the
 * standard streams may keep the event loop alive (the rule of
 * test/lifecycle/close-with-redis-down-or-frozen-exits.spec.ts).
 */
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { startRedisServer } from '../support/redis-server.js';

describe('app.close() with the node-redis subscriber waiting to reconnect', () => {
  for (const version of ['6', '5'] as const) {
    it(`lets the process exit on its own, node-redis ${version}`, { timeout: 60_000 }, async () => {
      const server = await startRedisServer();
      onTestFinished(() => server.stop({ kill: true }).catch(() => undefined));
      const child = spawnFixture(new URL('./fixtures/close-node-redis-subscriber-reconnecting.mjs', import.meta.url), {
        REDIS_URL: server.url,
        NODE_REDIS: version,
        // The application's strategy: try again every 5 s.
        RECONNECT_MS: '5000',
      });
      // However long its start takes (over 15 s on a loaded machine: Node, Nest and the drivers to load).
      await child.line(/^ready$/);
      const admin = new Redis(server.url);
      try {
        // The fixture's waiter subscribes on its way to waiting: on a loaded machine, after `ready`.
        await expect.poll(async () => String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n').filter((line) => /\bsub=1\b/.test(line)).length, { timeout: 10_000 }).toBe(1);
        // Connected: the fixture's client, the library's subscriber, this one.
        await admin.config('SET', 'maxclients', '1');
        expect(Number(await admin.client('KILL', 'TYPE', 'pubsub'))).toBe(1);
      } finally {
        admin.disconnect();
      }
      child.endWith('go');
      const [, closed] = await child.line(/^closed (\[.*\])$/);
      // Only the library's connection was reconnecting.
      expect(child.output()).toContain('handed ready true');
      const left = JSON.parse(closed!) as string[];
      expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
      await expect.poll(() => child.exit, { timeout: 30_000 }).toEqual({ code: 0 });
    });
  }
});
