/**
 * Found by review (thirty-fifth session). A renewal a majority accepted puts the lock back on the
 * masters that answered without it (QuorumStore.settle), in a round asked of every master: a master
 * with nothing to put back was handed an empty `Promise.all([])`, which the round counted as a
 * command sent to it and answered at once. For a frozen master (SIGSTOP, its connection open) that
 * is an answer: QuorumSilence took it for a master answering again, cleared its lapse, restarted its
 * one-second silence from then and resent it what it was owed. Each renewal that restored a copy
 * somewhere (with 5 masters, a winner of a split vote finds the loser's given-back copies gone at its
 * first renewal: common under contention; here master 0 keeps losing the key) so kept the frozen
 * master from ever being silent, and every attempt, give-back and renewal of the application was
 * sent to it again, the backlog growing in the client's memory for the whole freeze, as before
 * 6ecbe28 (see frozen-minority-master-backlog-grows-unbounded.spec.ts). A master with nothing to
 * put back is now asked nothing.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { clientsOf } from '../support/quorum-nodes.js';

describe('quorum of 5: renewals that put a lock back on a master while another master is frozen', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1, 2, 3, 4].map(() => startRedisServer()))));
  });
  afterAll(async () => {
    for (const server of servers) server.resume();
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('do not take the frozen master for one that answers: it is sent no growing backlog', { timeout: 60_000 }, async () => {
    const clients = clientsOf(servers);
    const queued = (): number => (clients[4] as unknown as { commandQueue: { length: number } }).commandQueue.length;
    // Renewals every 500 ms; a master gets 150 ms to answer.
    const app = await createLockApp({ redis: clients as never, ttl: 1_500 });
    const master0 = new Redis(servers[0]!.url);
    const held = await app.locks.acquire('held');
    const busy = await app.locks.acquire('busy');
    servers[4]!.pause();
    let stop = false;
    // Master 0 keeps losing the holder's copy: every renewal finds it gone there and puts it back.
    const losing = (async () => {
      while (!stop) {
        await master0.del('lock:{held}');
        await sleep(100);
      }
    })();
    // Callers polling a busy lock: each attempt goes to every master not silent.
    const pollers = Array.from({ length: 10 }, async () => {
      while (!stop) await app.locks.acquire('busy', { waitTimeout: 1_000 }).then((lock) => lock.release(), () => undefined);
    });
    try {
      await sleep(2_500);
      const early = queued();
      await sleep(2_500);
      const later = queued();
      // The holder kept its lock all along (a majority renewed it every time).
      expect(held.signal.aborted).toBe(false);
      // Before: the queue grew with every attempt and give-back (hundreds more).
      expect(later).toBeLessThanOrEqual(early + 20);
    } finally {
      stop = true;
      await Promise.all([losing, ...pollers]);
      servers[4]!.resume();
      await held.release().catch(() => undefined);
      await busy.release().catch(() => undefined);
      await app.close();
      master0.disconnect();
      for (const client of clients) client.disconnect();
    }
  });
});
