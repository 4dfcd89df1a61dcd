import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { countAttempts } from '../support/mechanism.js';
import { OWNER_CLOSED_CLIENTS, type OwnedClient } from '../support/owner-closed-clients.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * Found by review (drivers). A refusal that asking again can never change was taken for Redis not
 * answering: acquire() attempted again until its waitTimeout ran out (a minute, for a route), then
 * failed with LockNotAcquiredError, "Redis could not be asked" or "did not answer" as its cause.
 * Such refusals: a server that does not know EVALSHA and EVAL (rename-command, a proxy that does
 * not pass scripts on), an ACL user without those commands or without the lock's key pattern
 * (NOPERM), and a client handed in that its owner closed (it sends nothing any more). As for
 * data of another kind under the lock's keys (WRONGTYPE), the call now ends at its first refusal
 * with a RedisLockError naming what to fix, the client's error as its cause, and nothing left in
 * Redis. Counted by attempts, not by time.
 */
describe('an acquire() refused in a way asking again cannot change', () => {
  /** What the call came to, its attempts, and what Redis holds of its key after it. */
  async function refused(app: LockApp, key: string, admin: Redis): Promise<{ error: unknown; attempts: number; left: string[] }> {
    const attempts = countAttempts(app.locks);
    const error = await app.locks.acquire(key, { waitTimeout: 4_000 }).then(
      (lock) => lock,
      (caught: unknown) => caught,
    );
    attempts.stop();
    return { error, attempts: attempts.count, left: await admin.keys(`lock:{${key}}*`) };
  }

  /** A lock app on a client handed in, closed after the app. */
  async function handedApp(opened: Promise<OwnedClient>): Promise<LockApp> {
    const { client, close } = await opened;
    const app = await createLockApp({ redis: client, shutdownTimeout: 2_000 });
    return { ...app, close: () => app.close().finally(close) };
  }

  function expectEndedAtOnce({ error, attempts, left }: { error: unknown; attempts: number; left: string[] }, remedy: RegExp): void {
    // On main: 50 and more in the 4 s wait, then LockNotAcquiredError.
    expect(attempts, String(error)).toBe(1);
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(remedy);
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(left).toEqual([]);
  }

  describe('by a server that knows neither EVALSHA nor EVAL', () => {
    const server = useOwnServer(['--rename-command', 'EVALSHA', '', '--rename-command', 'EVAL', '']);

    const clients: Record<string, () => Promise<LockApp>> = {
      'its own ioredis connection': () => createLockApp({ redis: server.url(), shutdownTimeout: 2_000 }),
      'a node-redis client': () => handedApp(OWNER_CLOSED_CLIENTS['node-redis 6']!(server.url())),
      'a Valkey GLIDE client': () => handedApp(OWNER_CLOSED_CLIENTS.GLIDE!(server.url())),
    };
    for (const [label, open] of Object.entries(clients)) {
      it(`ends the call at its first refusal, naming rename-command (${label})`, { timeout: 20_000 }, async () => {
        const app = await open();
        try {
          expectEndedAtOnce(await refused(app, `unknown-command:${label}`, server.admin()), /rename-command/);
        } finally {
          await app.close();
        }
      });
    }
  });

  describe('by an ACL user', () => {
    const server = useOwnServer();
    const user = useAclUser(server, 'refused-for-good');
    let app: LockApp | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it.each([
      ['without EVALSHA and EVAL', ['-evalsha', '-eval']],
      ["without the lock's key pattern", ['resetkeys', '~other:*']],
    ])('%s: ends the call at its first refusal, naming the ACL', { timeout: 20_000 }, async (_what, rules) => {
      app = await createLockApp({ redis: user.url(), shutdownTimeout: 2_000 });
      await (await app.locks.acquire('acl-warm')).release();
      await user.rules(...rules);
      expectEndedAtOnce(await refused(app, 'acl-refused', server.admin()), /NOPERM[\s\S]*ACL/);
    });
  });

  describe('through a client handed in that its owner closed', () => {
    const server = useOwnServer();

    for (const [label, open] of Object.entries(OWNER_CLOSED_CLIENTS)) {
      it(`ends the call at its first refusal, naming the closed client (${label})`, { timeout: 20_000 }, async () => {
        const { client, close } = await open(server.url());
        const app = await createLockApp({ redis: client, shutdownTimeout: 2_000 });
        try {
          await (await app.locks.acquire(`closed-warm:${label}`)).release();
          await close();
          expectEndedAtOnce(await refused(app, `closed:${label}`, server.admin()), /client .*was closed/);
        } finally {
          await app.close();
        }
      });
    }
  });
});
