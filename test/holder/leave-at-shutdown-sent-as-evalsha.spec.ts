import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../lib/core/stores/redis/lock-lua.js';
import { blockRedis } from '../support/block-redis.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { watchCommands } from '../support/monitor.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review. At shutdown, releases and give-backs go as EVAL at once (`shuttingDown`:
 * a NOSCRIPT answer arriving after `shutdownTimeout`, once the connection is closed, would never
 * be followed by its EVAL). A waiter that gives up at shutdown leaves the queue with `leave`,
 * which still goes as EVALSHA: on a server that lost its scripts (restart, failover, SCRIPT
 * FLUSH) and answers late (busy, frozen), the EVALSHA runs after app.close() has closed the
 * connection, answers NOSCRIPT to nobody, and the EVAL that would have removed the departed
 * waiter (and given back a lock handed to it) is never sent.
 */
describe('a waiter leaving at shutdown, scripts flushed, Redis slow to answer', () => {
  const own = useOwnRedis();

  const cases = [
    { name: 'connection the module opened (a URL)', handed: false },
    { name: 'client handed in, quit by the application right after app.close()', handed: true },
  ];
  it.each(cases)('$name: the leave still runs in Redis (sent as EVAL, as releases are)', { timeout: 30_000 }, async ({ handed }) => {
    const admin = own.redis();
    const client = handed ? new Redis(own.url()) : undefined;
    client?.on('error', () => undefined);
    const holder = await createLockApp({ redis: own.url(), ttl: 30_000 });
    const waiter = await createLockApp({ redis: client ?? own.url(), ttl: 30_000, shutdownTimeout: 300 });
    let monitor: Awaited<ReturnType<typeof watchCommands>> | undefined;
    try {
      const held = await holder.locks.acquire('k');
      // The waiter's process has left a queue before (a wait that timed out): its connection
      // has the leave script (ioredis sends EVAL the first time, EVALSHA from then on).
      await expect(waiter.locks.acquire('k', { waitTimeout: 100 })).rejects.toThrow();
      for (let i = 0; i < 200 && (await admin.exists('lock:{k}:waiters')) === 1; i++) await sleep(25);
      const waiting = waiter.locks.acquire('k', { waitTimeout: 60_000 }).catch((error: unknown) => error);
      for (let i = 0; i < 200 && (await admin.zcard('lock:{k}:waiters')) === 0; i++) await sleep(25);
      const [member] = await admin.zrange('lock:{k}:waiters', 0, -1);
      expect(member).toBeDefined();
      const token = member!.slice(0, member!.lastIndexOf(':'));

      monitor = await watchCommands('k', own.url().replace(/\/?$/, '/0'), (arg) => arg === token);
      await admin.script('FLUSH');
      // Redis busy for 1.5 s: the shutdown's commands wait in the socket, shutdownTimeout (300 ms) runs out first.
      const block = await blockRedis(own.url(), 1_500);
      await waiter.close();
      // The application closes the client it handed in (its onApplicationShutdown).
      const quitting = client?.quit().catch(() => undefined);
      expect(await waiting).toMatchObject({ message: expect.stringContaining('shut down') });
      await block.ended;
      await quitting;
      await monitor.stop();

      const leaveSha = createHash('sha1').update(COMMANDS.leave.lua).digest('hex');
      const ran = monitor.seen.map(({ args }) => `${args[0]!.toUpperCase()} ${args[1] === leaveSha ? 'leave-sha' : args[1] === COMMANDS.leave.lua.replace(/\n/g, 'n').replace(/\t/g, 't') ? 'leave-lua' : '?'}`);
      // Before: ['EVALSHA leave-sha'] — NOSCRIPT, answered after the connection closed; no EVAL followed.
      expect(ran).toContain('EVAL leave-lua');
      void held;
    } finally {
      await holder.close();
      client?.disconnect();
    }
  });
});
