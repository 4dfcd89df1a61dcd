import { once } from 'node:events';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { OWNER_CLOSED_CLIENTS } from '../support/owner-closed-clients.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review of 8b41338, beside the renewals of the same clients. On one Redis, an isLocked()
 * or inspect() on a client handed in that its owner closed says the client was closed and to
 * close it only after the module shut down. In quorum mode, with the clients of a majority of the
 * masters closed so, it said only "Quorum not reached to check the lock: 1 of 3 Redis nodes
 * answered, 2 needed (node 0: Connection is closed.; ...)", the clients' errors without what to
 * do, as a majority's NOPERM did before a2e79e8. It now says, as an acquisition does, that the
 * masters refused it in a way asking again cannot change, naming the closed client and what to do.
 */
describe('quorum: reads through clients handed in that their owner closed, a majority of them', () => {
  const servers = useQuorumServers();

  for (const [label, open] of Object.entries(OWNER_CLOSED_CLIENTS)) {
    it(`isLocked() and inspect() name the closed client and what to do (${label})`, { timeout: 30_000 }, async () => {
      const owned = await Promise.all(servers.map((server) => open(server.url)));
      const app: LockApp = await createLockApp({ redis: owned.map(({ client }) => client) as never, shutdownTimeout: 1_000 });
      try {
        // Its connections up (a first read may find them connecting on a loaded machine).
        await expect.poll(() => app.locks.isLocked('q-read-closed').catch(() => undefined)).toBe(false);
        await Promise.all([0, 1].map((i) => owned[i]!.close()));
        // Closed: ioredis' quit() resolves, and its disconnect() returns, before the socket closes,
        // and a read sent meanwhile is refused only as it closes, which a loaded machine brought
        // after the read's round had ended (200 ms): its masters then counted as not answering in
        // time, which asking again can change. The reads are asked of clients that ended.
        await Promise.all([0, 1].map((i) => ended(owned[i]!.client)));
        for (const [call, read] of [
          ['check', () => app.locks.isLocked('q-read-closed')],
          ['inspect', () => app.locks.inspect('q-read-closed')],
        ] as const) {
          const error = await (read() as Promise<unknown>).then(
            (value) => value,
            (caught: unknown) => caught,
          );
          expect(error).toBeInstanceOf(RedisLockError);
          const message = (error as Error).message;
          // On main: "Quorum not reached to check the lock: 1 of 3 Redis nodes answered, 2 needed (node 0: ...)."
          // The whole message in the failure's first line (an assertion shortens the value it shows).
          expect(message, message).toMatch(new RegExp(`^Quorum not reached to ${call} the lock: 2 of 3 Redis nodes refused it in a way asking again cannot change[\\s\\S]*client was closed[\\s\\S]*onApplicationShutdown`));
          expect((error as Error).cause).toBeInstanceOf(Error);
        }
      } finally {
        await app.close();
        await owned[2]!.close();
      }
    });
  }
});

/** Resolves once an ioredis client its owner closed has ended (its socket closed); other clients' close() resolves then. */
async function ended(client: unknown): Promise<void> {
  if (client instanceof Redis && client.status !== 'end') await once(client, 'end');
}
