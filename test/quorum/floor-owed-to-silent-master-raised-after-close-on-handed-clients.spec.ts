import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { clientsOf, useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Suspected in the thirty-ninth session, shown in the fortieth. A fenced grant on a majority that
 * agreed on its counter raises the other masters' counters to the token, and a silent master
 * (see QuorumSilence) is owed that raise until it answers again (QuorumStore.answersAgain).
 * app.close() cleared the releases owed, not the raises: with the application's own clients
 * handed in (they stay open after the close), the master that resumed after app.close() was
 * sent the raise then, by an application closed already, and a counter the application never
 * used appeared there.
 */
describe('quorum: a fencing raise owed to a silent master, with clients handed in', () => {
  const servers = useQuorumServers();

  it('is not sent once app.close() has resolved', { timeout: 30_000 }, async () => {
    const clients = clientsOf(servers);
    const admin = new Redis(servers[2]!.url);
    const app = await createLockApp({ redis: clients as never, ttl: 30_000, shutdownTimeout: '5s' });
    try {
      servers[2]!.pause();
      // A read leaves master 2 unanswered (a round's end); a second later it is silent.
      await app.locks.isLocked('warm-up');
      await sleep(1_200);
      // Granted by masters 0 and 1 with one counter; master 2, silent, is owed the raise to it.
      const lock = await app.locks.acquire('raised');
      expect(lock.fencingToken).toBeGreaterThan(0);
      await lock.release();
      await app.close();
      servers[2]!.resume();
      // Master 2 answers the read it was left with (the application's client is still open); a
      // command sent on that client after it has run before the ping behind it.
      await clients[2]!.ping();
      await clients[2]!.ping();
      // Before: 1, the counter raised to the token after the close.
      expect(await admin.exists('lock:{raised}:fence')).toBe(0);
    } finally {
      servers[2]!.resume();
      await app.close();
      admin.disconnect();
      for (const client of clients) client.disconnect();
    }
  });
});
