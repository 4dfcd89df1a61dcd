import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockApp } from '../support/lock-app.js';
import { useQuorumAclUser } from '../support/quorum-acl-user.js';

/**
 * Found by review of 2966e3f. A release that a master refused in a way asking again cannot change
 * (its ACL user may not run EVALSHA and EVAL, or touch the lock's keys: NOPERM) was kept by the
 * quorum store as a release that master missed, owed to it, and sent it again at app.close() (and
 * whenever it answered again after a silence), where it could only be refused again: one more
 * refused command per release, up to the bound of 10,000 to 20,000 by master, for a master whose
 * ACL was changed under a long-running application. On one Redis such a release is given up at
 * once (e05f9cb), and so is a quorum's a majority refused (2966e3f), by the engine, though the
 * store still owed it to each refusing master. A release refused for good is not owed now, by a
 * minority or a majority. Shown by the commands the refusing masters rejected, counted by Redis
 * itself (INFO commandstats), not by time.
 */
describe('quorum: a release a master refused for good', () => {
  const { admins, app: userApp, rules } = useQuorumAclUser('owed');

  /** The scripts master `admin` rejected (EVALSHA and EVAL: NOPERM). */
  async function rejected(admin: Redis): Promise<number> {
    const info = await admin.info('commandstats');
    let count = 0;
    for (const [, calls] of info.matchAll(/^cmdstat_eval(?:sha)?:.*\brejected_calls=(\d+)/gm)) count += Number(calls);
    return count;
  }

  /** The releases the application keeps to send again (see `UnconfirmedReleases`). */
  const toSendAgain = (locks: LockApp['locks']): number => (locks[LOCK_RUNNER] as unknown as { unconfirmed: { pending: Map<string, unknown> } }).unconfirmed.pending.size;

  // `sent`: how often each refusing master is sent the release before the close: once, and by a
  // majority's refusal once more, the engine's resend that gives it up (2966e3f).
  it.each([
    ['a minority of the masters (EVALSHA and EVAL taken away)', [0], ['-evalsha', '-eval'], 1],
    ["a minority of the masters (the lock's keys taken away)", [0], ['resetkeys', '~other:*'], 1],
    ['a majority of the masters', [0, 1], ['-evalsha', '-eval'], 2],
  ])('is not sent again at app.close(): %s', { timeout: 30_000 }, async (_what, refusing, acl, sent) => {
    const app = await userApp({ shutdownTimeout: 2_000 });
    const key = `q-owed-refused:${refusing.length}:${acl[0]}`;
    const lock = await app.locks.acquire(key, { ttl: 60_000 });
    // Its grant on every master (a round ends on a majority: the third's may still be on its way).
    await expect.poll(() => Promise.all(admins.map((admin) => admin.exists(`lock:{${key}}`)))).toEqual([1, 1, 1]);
    const before = await Promise.all(refusing.map((i) => rejected(admins[i]!)));
    await rules(refusing, ...acl);
    await lock.release().catch(() => undefined);
    // Each refusing master refused it (a round that ends on a majority does not wait for that).
    // A refusal that came after its round's bound on a loaded machine is one more: the release
    // then counts as missed and goes again once the master answers (a CI run saw 2 for 1), which
    // the close must not add to.
    const refused = () => Promise.all(refusing.map(async (i, n) => (await rejected(admins[i]!)) - before[n]!));
    await expect.poll(async () => (await refused()).every((count) => count >= sent)).toBe(true);
    await expect.poll(() => toSendAgain(app.locks)).toBe(0);
    const beforeClose = await refused();
    await app.close();
    // On main: refused once more each, the release sent again at the close.
    expect(await refused()).toEqual(beforeClose);
    // Their copies stay until the lease ends; the others released theirs.
    for (const i of refusing) expect(await admins[i]!.pttl(`lock:{${key}}`)).toBeGreaterThan(0);
  });
});
