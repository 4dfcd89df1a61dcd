import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockApp } from '../support/lock-app.js';
import { useQuorumAclUser } from '../support/quorum-acl-user.js';

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
  const { admins, app: userApp, rules } = useQuorumAclUser('releaser');

  /** The releases the application keeps to send again (see `UnconfirmedReleases`). */
  const toSendAgain = (locks: LockApp['locks']): number => (locks[LOCK_RUNNER] as unknown as { unconfirmed: { pending: Map<string, unknown> } }).unconfirmed.pending.size;

  it('says they refused it, why, what to fix, and that its lease ends on its own; it is not sent again', { timeout: 30_000 }, async () => {
    const app = await userApp();
    const key = 'q-release-refused';
    const lock = await app.locks.acquire(key, { ttl: 30_000 });
    // Its grant on every master (a round ends on a majority: the third's may still be on its way).
    await expect.poll(() => Promise.all(admins.map((admin) => admin.exists(`lock:{${key}}`)))).toEqual([1, 1, 1]);
    await rules([0, 1], '-evalsha', '-eval');
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
    await expect.poll(() => toSendAgain(app.locks)).toBe(0);
  });
});
