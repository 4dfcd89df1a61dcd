import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';
import { RECORDED_CLIENTS, recordedGlide, type Handed } from '../support/recorded-clients.js';

/**
 * Found by a defect hunt (drivers), after 23e61b5b. At app.close() the release of a lock still held
 * is a round sent to every master's client, and 23e61b5b stopped only the sending again of what a
 * client its owner closed had failed: the round itself still went once to such a client, known
 * closed since the shutdown began, only to fail at once (node-redis' ClientClosedError, GLIDE's
 * ClosingError), one refused command per lock held at the close and by closed master. From the
 * shutdown on, nothing is sent on a client known closed: the round counts it refused there for
 * good, so the release is not owed to it (its copy ends with its lease), and with a majority so
 * the lock is given up and named, as when the command failed. Shown by the commands sent on the
 * closed clients during the close, not by time.
 */
describe('quorum: the release round at app.close() on clients handed in that their owner closed', () => {
  const servers = useQuorumServers();

  /** The clients that send what they are asked on a client their owner closed, and how their owner closes them. */
  const clients: [string, (url: string) => Promise<Handed>, (client: unknown) => Promise<unknown>][] = [
    ['node-redis', RECORDED_CLIENTS.find(([name]) => name === 'node-redis')![1], (client) => (client as { close(): Promise<void> }).close()],
    ['GLIDE', recordedGlide, async (client) => (client as { close(): void }).close()],
  ];

  for (const [label, open, closeOwned] of clients) {
    for (const closing of [[2], [1, 2]]) {
      it(`sends nothing on the ${closing.length === 1 ? 'minority' : 'majority'}'s closed clients (${label})`, { timeout: 30_000 }, async () => {
        const handed = await Promise.all(servers.map((server) => open(server.url)));
        const app = await createLockApp({ redis: handed.map(({ client }) => client) as never, shutdownTimeout: 2_000 });
        let closed = false;
        onTestFinished(() => (closed ? undefined : app.close()));
        const master2 = new Redis(servers[2]!.url);
        onTestFinished(() => void master2.disconnect());
        // A key of its own on each run: a failed run leaves its lock held for 60 s, and vitest's
        // retry would only wait out its waitTimeout behind it (CI's second failure of the case).
        const key = `q-round-closed:${closing.length}:${label}:${randomUUID().slice(0, 8)}`;
        const held = await app.locks.acquire(key, { ttl: 60_000 });
        // Its grant on master 2 (a round ends on a majority: the third's may still be on its way).
        await expect.poll(() => master2.exists(`lock:{${key}}`)).toBe(1);
        // And every master's grant reply handled: a reply the owner's close failed raises that
        // master's fencing floor (best effort, the round's catch-up), a command on the closed
        // client before the shutdown, not the release round this case counts (CI saw it: sent
        // [script, eval], the floor script's first call). A PING is answered after it.
        await Promise.all(handed.map(({ ping }) => ping()));
        for (const index of closing) await closeOwned(handed[index]!.client);
        const sent: string[] = [];
        for (const index of closing) handed[index]!.record(sent);
        closed = true;
        await app.close();
        // Failed: one EVALSHA (or EVAL) by closed client, the held lock's release round.
        expect(sent).toEqual([]);
        expect(held.held).toBe(false);
        if (closing.length === 2) {
          // Refused for good by a majority: given up, and named, as when the command was sent and failed.
          const warning = app.logs.lines.find(({ level, message }) => level === 'warn' && message.includes('Releases refused for good'));
          expect(warning?.message).toContain(key);
        }
      });
    }
  }
});
