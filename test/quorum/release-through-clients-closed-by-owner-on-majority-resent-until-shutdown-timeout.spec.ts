import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { OWNER_CLOSED_CLIENTS, type OwnedClient } from '../support/owner-closed-clients.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review of 2966e3f and 8b41338. On one Redis, a release that fails on a client handed in
 * that its owner closed is kept to send again while the application runs (the owner may open it
 * again: ioredis' connect()), and given up at app.close(), its lock named in one warning as left
 * in Redis until its ttl. In quorum mode, with the clients of a majority of the masters closed so,
 * such a release said "Quorum not reached to release the lock: 1 of 3 Redis nodes agreed", which
 * the engine takes for passing whatever the shutdown (its check that every client is closed
 * fails while one master's is open): app.close() sent it again, refused each time, until its
 * shutdownTimeout ran out, and said nothing of the lock left behind; so did a lock still held at
 * the close, whose release failed alike. It is given up at the close now, as on one Redis, and
 * named in that warning. Shown by the warning and by what is left to send again, not by time.
 */
describe('quorum: releases through clients handed in that their owner closed, a majority of them', () => {
  const servers = useQuorumServers();

  /** The releases the application keeps to send again (see `UnconfirmedReleases`). */
  const toSendAgain = (locks: LockApp['locks']): number => (locks[LOCK_RUNNER] as unknown as { unconfirmed: { pending: Map<string, unknown> } }).unconfirmed.pending.size;

  async function quorumApp(open: (url: string) => Promise<OwnedClient>): Promise<{ app: LockApp; owned: OwnedClient[] }> {
    const owned = await Promise.all(servers.map((server) => open(server.url)));
    // A long bound: on main the close sent the releases again until it ran out.
    const app = await createLockApp({ redis: owned.map(({ client }) => client) as never, shutdownTimeout: 10_000 });
    return { app, owned };
  }

  for (const [label, open] of Object.entries(OWNER_CLOSED_CLIENTS)) {
    it(`are given up at app.close(), named as left in Redis (${label})`, { timeout: 60_000 }, async () => {
      const { app, owned } = await quorumApp(open);
      try {
        const released = await app.locks.acquire(`q-release-closed:released:${label}`, { ttl: 60_000 });
        const held = await app.locks.acquire(`q-release-closed:held:${label}`, { ttl: 60_000 });
        await Promise.all([0, 1].map((i) => owned[i]!.close()));
        // While the application runs, the owner may open its clients again: kept to send again.
        const error = await released.release().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(RedisLockError);
        expect(toSendAgain(app.locks)).toBe(1);
        expect(held.signal.aborted).toBe(false);
        await app.close();
        const warning = app.logs.lines.find(({ level, message }) => level === 'warn' && message.includes('Releases refused for good'));
        // On main: none, the close sending both releases again until its shutdownTimeout ran out.
        expect(warning?.message).toContain(`q-release-closed:released:${label}`);
        expect(warning?.message).toContain(`q-release-closed:held:${label}`);
      } finally {
        await app.close();
        await owned[2]!.close();
      }
    });
  }
});
