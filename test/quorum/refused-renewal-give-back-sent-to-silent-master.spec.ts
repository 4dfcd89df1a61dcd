/**
 * Found by review (thirty-fifth session). A renewal refused (too many masters lost the lock) gives
 * back the copies the holder may still have (QuorumStore.giveBackRefused), to every master that did
 * not say the lock is gone or not its own: a silent master too (frozen, asked nothing since it left
 * its commands unanswered for a second, see QuorumSilence), which had no code to say it with. Each
 * refused lock's give-back went into that master's backlog at once (here 200 locks, 200 commands),
 * the backlog a silent master is not sent. It is now owed to it, and sent once it answers again.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { clientsOf, useQuorumServers } from '../support/quorum-nodes.js';

describe('quorum: renewals refused while a master is silent', () => {
  const servers = useQuorumServers();

  it('send that master nothing, and give its copies back once it answers again', { timeout: 60_000 }, async () => {
    const clients = clientsOf(servers);
    const queued = (): number => (clients[2] as unknown as { commandQueue: { length: number } }).commandQueue.length;
    const app = await createLockApp({ redis: clients as never, ttl: 20_000, renewInterval: 500 });
    const admins = servers.map((server) => new Redis(server.url));
    try {
      const keys = Array.from({ length: 200 }, (_, i) => `refused:${i}`);
      const locks = await Promise.all(keys.map((key) => app.locks.acquire(key)));
      // Every copy is on master 2 too before it freezes.
      await expect.poll(() => admins[2]!.exists(...keys.map((key) => `lock:{${key}}`))).toBe(keys.length);
      servers[2]!.pause();
      // Renewals leave it unanswered: silent after a second.
      await sleep(2_500);
      const before = queued();
      // Masters 0 and 1 lose every lock (restarted empty, say): the next renewal is refused.
      await Promise.all([0, 1].map((i) => admins[i]!.flushall()));
      await Promise.all(locks.map((lock) => new Promise((resolve) => (lock.signal.aborted ? resolve(undefined) : lock.signal.addEventListener('abort', resolve, { once: true })))));
      await sleep(200);
      // Before: 200 more, one give-back per refused lock.
      expect(queued()).toBeLessThanOrEqual(before + 20);
      servers[2]!.resume();
      // Once it answers again, the copies it kept are given back, not left for their ttl.
      await expect.poll(() => admins[2]!.exists(...keys.map((key) => `lock:{${key}}`)), { timeout: 3_000 }).toBe(0);
    } finally {
      servers[2]!.resume();
      await app.close();
      admins.forEach((admin) => admin.disconnect());
      for (const client of clients) client.disconnect();
    }
  });
});
