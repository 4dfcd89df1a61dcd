import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockApp } from '../support/lock-app.js';
import { useQuorumAclUser } from '../support/quorum-acl-user.js';

/**
 * Found by review of 21f821b3. A release a master refused for good (NOPERM: its ACL user may not
 * touch the lock's keys) is not owed to it since 21f821b3: sent again, it would be refused alike.
 * But a release owed for another reason (the master was silent when it was released: frozen,
 * sent nothing) is sent once that master answers again, and when it refused it for good then, it
 * was owed again, and sent once more at app.close(), to be refused alike. It is given up there
 * now, as a first refusal for good is. Shown by the scripts the refusing master rejected, counted
 * by Redis itself (INFO commandstats), not by time.
 */
describe('quorum: a release owed to a silent master that refuses it for good once it answers again', () => {
  const { servers, admins, app: userApp, rules } = useQuorumAclUser('resent-refused');

  /** The scripts master `admin` rejected (EVAL and EVALSHA: NOPERM). */
  async function rejected(admin: Redis): Promise<number> {
    const info = await admin.info('commandstats');
    let count = 0;
    for (const [, calls] of info.matchAll(/^cmdstat_eval(?:sha)?:.*\brejected_calls=(\d+)/gm)) count += Number(calls);
    return count;
  }

  /** Whether the app's quorum store asks master `index` nothing now (see `QuorumSilence`). */
  const silent = (app: LockApp, index: number): boolean =>
    (app.locks[LOCK_RUNNER] as unknown as { store: { silence: { refusal(index: number): unknown } } }).store.silence.refusal(index) !== undefined;

  it('is not sent again at app.close()', { timeout: 60_000 }, async () => {
    const app = await userApp({ shutdownTimeout: 2_000 });
    const key = 'q-resent-refused:held';
    const lock = await app.locks.acquire(key, { ttl: 60_000 });
    // Its grant on every master (a round ends on a majority: the third's may still be on its way).
    await expect.poll(() => Promise.all(admins.map((admin) => admin.exists(`lock:{${key}}`)))).toEqual([1, 1, 1]);
    // Master 0 refuses this lock's keys for good from now on, and still answers reads of others.
    await rules([0], 'resetkeys', '~lock:{q-resent-refused:free*');
    const before = await rejected(admins[0]!);
    servers[0]!.pause();
    try {
      // Reads leave their rounds unanswered there for a second: silent, asked nothing more.
      await expect
        .poll(
          async () => {
            await app.locks.isLocked('q-resent-refused:free');
            return silent(app, 0);
          },
          { timeout: 10_000 },
        )
        .toBe(true);
      // Released by masters 1 and 2; not sent to the silent master 0, owed to it.
      await lock.release();
    } finally {
      servers[0]!.resume();
    }
    // Master 0 answers the reads it was sent: it answers again, and is sent the release it was
    // owed, which it refuses for good.
    await expect.poll(async () => (await rejected(admins[0]!)) - before, { timeout: 10_000 }).toBe(1);
    await app.close();
    // Failed: 2, owed again and sent once more at the close.
    expect((await rejected(admins[0]!)) - before).toBe(1);
    // Its copy stays until the lease ends; the others released theirs.
    expect(await Promise.all(admins.map((admin) => admin.exists(`lock:{${key}}`)))).toEqual([1, 0, 0]);
  });
});
