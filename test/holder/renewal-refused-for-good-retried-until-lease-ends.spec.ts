import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, RedisLockError, type LockEvent } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review of d2f5e3e. A held lock whose watchdog renewals Redis refuses in a way asking
 * again cannot change (an ACL changed under the running application: NOPERM for EVALSHA and EVAL,
 * or for the lock's keys) was renewed again at every tick, each refusal logged as "retrying until
 * their lease deadlines", and its holder was told of the loss only when the lease ran out (a ttl
 * later: minutes, for a long job or a leader's term), its reason 'expired' ("Redis unreachable or
 * the event loop blocked"). The holder is now told at the first such refusal: its signal aborts
 * with a LockLostError (reason 'refused') whose cause names the ACL, and the lost event is
 * emitted. Shown by the lease still running in Redis when the loss is told, not by time.
 */
describe('a held lock whose renewal Redis refuses for good', () => {
  const own = useOwnRedis();
  const user = useAclUser(own, 'renewal-refused');
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it.each([
    ['EVALSHA and EVAL taken from its ACL user', ['-evalsha', '-eval']],
    ["the lock's key pattern taken from its ACL user", ['resetkeys', '~other:*']],
  ])('is lost at the first refusal, its cause naming the ACL (%s)', { timeout: 30_000 }, async (_what, rules) => {
    app = await createLockApp({ redis: user.url(), shutdownTimeout: 1_000 });
    const key = 'renewal-refused';
    const lost: LockEvent[] = [];
    const subscription = app.locks.events$.subscribe((event) => event.type === 'lost' && lost.push(event));
    try {
      // A lease of a minute renewed every 200 ms: on main the loss came only as the minute ran out.
      const lock = await app.locks.acquire(key, { ttl: 60_000, renewInterval: 200 });
      await user.rules(...rules);
      await expect.poll(() => lock.signal.aborted, { timeout: 10_000 }).toBe(true);
      // Told while Redis still holds the lease it can no longer renew.
      expect(await own.redis().pttl(`lock:{${key}}`)).toBeGreaterThan(0);
      const error = lock.signal.reason as LockLostError;
      expect(error).toBeInstanceOf(LockLostError);
      expect(error.reason).toBe('refused');
      expect(error.message).toMatch(/NOPERM[\s\S]*ACL/);
      expect(error.cause).toBeInstanceOf(RedisLockError);
      expect(lost).toMatchObject([{ type: 'lost', key, reason: 'refused' }]);
      expect(app.logs.has('warn', 'retrying until their lease deadlines')).toBe(false);
      expect(app.logs.has('error', 'NOPERM')).toBe(true);
    } finally {
      subscription.unsubscribe();
      await user.rules('+@all', 'allkeys');
    }
  });
});
