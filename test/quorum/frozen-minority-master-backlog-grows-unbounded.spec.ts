import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { clientsOf, useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review (twenty-ninth session): quorum mode keeps serving locks while a minority master is frozen (SIGSTOP, a stuck server:
 * its TCP connection stays open, so the client never fails the commands). Every acquisition
 * attempt, give-back and renewal still sends that master a command, which waits in the client's
 * queue (and memory) until the master resumes: the backlog grows for as long as the master stays
 * frozen, at the rate the application works (here 20 callers polling a busy lock queue ~130
 * commands a second, ~4 KB of heap each), and the master, once it resumes, runs every stale
 * acquisition, give-back and renewal of the whole freeze before anything new. Nothing bounded it:
 * a master that had not answered for a whole round's timeout was asked again at the next attempt.
 * A master silent for a second (quorum-silence.ts) is asked nothing now until it answers.
 */
describe('quorum: a master frozen while the application keeps working', () => {
  const servers = useQuorumServers();

  it('is not sent an ever-growing backlog of commands, and is asked again once it answers', { timeout: 60_000 }, async () => {
    const clients = clientsOf(servers);
    const queued = (): number => (clients[2] as unknown as { commandQueue: { length: number } }).commandQueue.length;
    const app = await createLockApp({ redis: clients as never, ttl: 3_000 });
    const holder = await createLockApp({ redis: servers.map((server) => server.url), ttl: 3_000 });
    const held = await holder.locks.acquire('busy');
    servers[2]!.pause();
    let stop = false;
    const pollers = Array.from({ length: 20 }, async () => {
      while (!stop) await app.locks.acquire('busy', { waitTimeout: 2_000 }).then((lock) => lock.release(), () => undefined);
    });
    try {
      await sleep(2_500);
      const early = queued();
      await sleep(2_500);
      const later = queued();
      // Before: ~325, then ~650: every attempt and give-back of the last 2.5 s added to it.
      expect(later).toBeLessThanOrEqual(early + 50);
    } finally {
      stop = true;
      await Promise.all(pollers);
      servers[2]!.resume();
      await held.release();
    }
    try {
      // Once it answers, it is asked again: its backlog drains, and the next lock is on it too.
      await expect.poll(queued, { timeout: 10_000 }).toBe(0);
      const lock = await app.locks.acquire('after');
      const master2 = new Redis(servers[2]!.url);
      // The round ends at an agreeing majority: master 2's grant may land a moment later.
      await expect.poll(() => master2.exists('lock:{after}'), { timeout: 10_000 }).toBe(1);
      master2.disconnect();
      await lock.release();
    } finally {
      await app.close();
      await holder.close();
      for (const client of clients) client.disconnect();
    }
  });
});
