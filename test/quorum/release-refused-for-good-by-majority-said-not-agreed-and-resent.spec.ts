import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review of a56267c. On one Redis, a release refused for good (an ACL user without
 * EVALSHA, EVALSHA renamed) says Redis refused it, why, what to fix, and that its lease ends on its
 * own (e05f9cb), and its release is not sent again (d2f5e3e: refused alike). In quorum mode, a
 * release a majority of the masters refused so rejected with "Quorum not reached to release the
 * lock: 1 of 3 Redis nodes agreed" and the masters' replies, saying neither what to fix nor what
 * becomes of the lock, and it was sent again, refused each time, until its lease ran out (and at
 * shutdown until shutdownTimeout). It now says the masters refused it, why, what to fix, and that
 * its lease ends on its own there; and it is given up at its first resend. Shown by the release
 * the application keeps to send again, not by time.
 */
describe('quorum: a release refused for good by a majority of the masters', () => {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  const user = `releaser-${process.pid}`;
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1, 2].map(() => startRedisServer()))));
    admins.push(...servers.map((server) => new Redis(server.url)));
  });
  afterAll(async () => {
    await Promise.all(admins.map((admin) => admin.quit()));
    await Promise.all(servers.map((server) => server.stop()));
  });

  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await Promise.all(admins.map((admin) => admin.call('ACL', 'DELUSER', user)));
    await Promise.all(admins.map((admin) => admin.flushall()));
  });

  /** The releases the application keeps to send again (see `UnconfirmedReleases`). */
  const toSendAgain = (locks: LockApp['locks']): number => (locks[LOCK_RUNNER] as unknown as { unconfirmed: { pending: Map<string, unknown> } }).unconfirmed.pending.size;

  it('says they refused it, why, what to fix, and that its lease ends on its own; it is not sent again', { timeout: 30_000 }, async () => {
    await Promise.all(admins.map((admin) => admin.call('ACL', 'SETUSER', user, 'reset', 'on', '>pw', '~*', '&*', '+@all')));
    const urls = servers.map((server) => {
      const url = new URL(server.url);
      url.username = user;
      url.password = 'pw';
      return url.toString();
    });
    app = await createLockApp({ redis: urls as never, shutdownTimeout: 1_000 });
    const key = 'q-release-refused';
    const lock = await app.locks.acquire(key, { ttl: 30_000 });
    // Its grant on every master (a round ends on a majority: the third's may still be on its way).
    await expect.poll(() => Promise.all(admins.map((admin) => admin.exists(`lock:{${key}}`)))).toEqual([1, 1, 1]);
    await Promise.all([0, 1].map((i) => admins[i]!.call('ACL', 'SETUSER', user, '-evalsha', '-eval')));
    const error = await lock.release().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisLockError);
    const message = (error as Error).message;
    // On main: "Quorum not reached to release the lock: 1 of 3 Redis nodes agreed, 2 needed (node 0: NOPERM ...; node 1: NOPERM ...)."
    expect(message).not.toMatch(/agreed/);
    expect(message).toMatch(/^Quorum not reached to release the lock: 2 of 3 Redis nodes refused it[\s\S]*NOPERM[\s\S]*ACL[\s\S]*its lease ends on its own/);
    expect(((error as Error).cause as Error).message).toMatch(/NOPERM/);
    // The refusing masters keep their copies until the lease ends; the third released its own.
    expect(await admins[0]!.pttl(`lock:{${key}}`)).toBeGreaterThan(0);
    expect(await admins[2]!.exists(`lock:{${key}}`)).toBe(0);
    // Given up at its first resend (on main: sent again until the lease's end, a minute away).
    await expect.poll(() => toSendAgain(app!.locks)).toBe(0);
  });
});
