import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * A master whose client handed in its owner had closed, but whose refusal came only after the
 * round's time (the socket's close, which a frozen server or a loaded machine puts off), is named
 * as the closed client it is, with what to do, as when the refusal comes in time: it counted as
 * "no answer within 200 ms", which sends an operator after a slow Redis, and as a failure asking
 * again may cure.
 */
describe('quorum: a read through clients their owner closed, refused only after the round', () => {
  const servers = useQuorumServers();

  it('isLocked() names the closed client and what to do', { timeout: 30_000 }, async () => {
    const clients = servers.map((server) => {
      const client = new Redis(server.url);
      client.on('error', () => undefined);
      return client;
    });
    let app: LockApp | undefined;
    try {
      app = await createLockApp({ redis: clients as never, shutdownTimeout: 1_000 });
      await expect.poll(() => app!.locks.isLocked('q-closed-late').catch(() => undefined)).toBe(false);
      // Frozen: the sockets the owner ends close only once the servers run again, after the round.
      servers[0]!.pause();
      servers[1]!.pause();
      clients[0]!.disconnect();
      clients[1]!.disconnect();
      const error = await app.locks.isLocked('q-closed-late').then(
        (value) => value,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RedisLockError);
      const message = (error as Error).message;
      expect(message, message).toMatch(/^Quorum not reached to check the lock: 2 of 3 Redis nodes refused it in a way asking again cannot change[\s\S]*client was closed[\s\S]*onApplicationShutdown/);
    } finally {
      servers[0]!.resume();
      servers[1]!.resume();
      await app?.close();
      for (const client of clients) client.disconnect();
    }
  });
});
