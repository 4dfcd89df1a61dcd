import { describe, expect, it } from 'vitest';
import { LockLostError, RedisLockError, type LockEvent } from '../../lib/index.js';
import { useQuorumAclUser } from '../support/quorum-acl-user.js';

/**
 * Found by review of a56267c. On one Redis, a watchdog renewal refused in a way asking again cannot
 * change (an ACL changed under the running application: NOPERM for EVALSHA and EVAL, or for the
 * lock's keys) loses the lock at once, reason 'refused', its cause naming what to fix (a358b42).
 * In quorum mode the renewals a majority of the masters refused so counted as unanswered: the
 * holder was renewed again at every tick, and told only as its lease ran out (a minute here), its
 * reason 'expired'. It is now told at the first such renewal, as on one Redis, and the copy the
 * master that still renews took for a ttl is given back. A minority's refusal ends nothing: the
 * majority that renews keeps the lock renewed. Shown by the lease still running on the refusing
 * masters when the loss is told, and by renewals counted, not by time.
 */
describe('quorum: renewals refused for good', () => {
  const { admins, app: userApp, rules } = useQuorumAclUser('renewer');

  it.each([
    ['EVALSHA and EVAL taken from its ACL user', ['-evalsha', '-eval']],
    ["the lock's key pattern taken from its ACL user", ['resetkeys', '~other:*']],
  ])('by a majority: the holder is told at the first refusal, its cause naming the ACL (%s)', { timeout: 30_000 }, async (_what, acl) => {
    const app = await userApp();
    const key = `q-renewal-refused:${acl[0]}`;
    const lost: LockEvent[] = [];
    const subscription = app.locks.events$.subscribe((event) => event.type === 'lost' && lost.push(event));
    try {
      // A lease of a minute renewed every 200 ms: on main the loss came only as the minute ran out.
      const lock = await app.locks.acquire(key, { ttl: 60_000, renewInterval: 200 });
      // Its grant on every master (a round ends on a majority: the third's may still be on its way).
      await expect.poll(() => Promise.all(admins.map((admin) => admin.exists(`lock:{${key}}`)))).toEqual([1, 1, 1]);
      await rules([0, 1], ...acl);
      await expect.poll(() => lock.signal.aborted, { timeout: 10_000 }).toBe(true);
      // Told while the refusing masters still hold the lease they can no longer renew.
      expect(await admins[0]!.pttl(`lock:{${key}}`)).toBeGreaterThan(0);
      const error = lock.signal.reason as LockLostError;
      expect(error).toBeInstanceOf(LockLostError);
      expect(error.reason).toBe('refused');
      expect(error.message).toMatch(/2 of 3[\s\S]*NOPERM[\s\S]*ACL/);
      expect(error.cause).toBeInstanceOf(RedisLockError);
      expect(lost).toMatchObject([{ type: 'lost', key, reason: 'refused' }]);
      // The copy the master that still renews took for a minute is given back.
      await expect.poll(() => admins[2]!.exists(`lock:{${key}}`)).toBe(0);
    } finally {
      subscription.unsubscribe();
    }
  });

  it('by a minority: the lock stays held and renewed on the majority', { timeout: 30_000 }, async () => {
    const app = await userApp();
    const key = 'q-renewal-refused:minority';
    let renewed = 0;
    const subscription = app.locks.events$.subscribe((event) => event.type === 'renewed' && renewed++);
    try {
      const lock = await app.locks.acquire(key, { ttl: 60_000, renewInterval: 200 });
      await rules([0], '-evalsha', '-eval');
      const before = renewed;
      // Renewed three times more with master 0 refusing each.
      await expect.poll(() => renewed - before, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      expect(lock.signal.aborted).toBe(false);
      expect(await admins[1]!.pttl(`lock:{${key}}`)).toBeGreaterThan(0);
      await lock.release();
    } finally {
      subscription.unsubscribe();
    }
  });
});
