import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, RedisLockError, type LockEvent } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review of a358b42, which tells a holder at once of a watchdog renewal Redis refuses in
 * a way asking again cannot change. A lock handed over by a release starts on a short grant lease
 * whose first renewal is retried until Redis confirms it: a refusal of that kind (EVALSHA and EVAL
 * taken from the ACL user as the waiter is handed the lock) was swallowed and asked again until
 * the grant lease ran out, the holder told then with reason 'expired'. It is told now at that
 * refusal, reason 'refused', the cause naming the ACL.
 */
describe('a handed-over lock whose first renewal Redis refuses for good', () => {
  const own = useOwnRedis();
  const user = useAclUser(own, 'first-renewal-refused');
  let holder: LockApp | undefined;
  let waiter: LockApp | undefined;
  afterEach(async () => {
    await user.rules('+@all');
    await waiter?.close();
    await holder?.close();
    holder = waiter = undefined;
  });

  it('is lost at that refusal, its cause naming the ACL', { timeout: 60_000 }, async () => {
    holder = await createLockApp({ redis: own.url() });
    // A watchdog tick a minute away: only the first renewal renews before the test ends.
    waiter = await createLockApp({ redis: user.url(), shutdownTimeout: 1_000 });
    const events: LockEvent[] = [];
    const subscription = waiter.locks.events$.subscribe((event) => events.push(event));
    try {
      // The first renewal may come due as the lock is handed over, before the ACL changes: such
      // a round proves nothing (its renewed event says so) and is run again.
      for (let round = 0; round < 10; round++) {
        const key = `first-renewal-refused:${round}`;
        events.length = 0;
        const held = await holder.locks.acquire(key, { ttl: 60_000 });
        const waiting = waiter.locks.acquire(key, { ttl: 180_000, renewInterval: 60_000, waitTimeout: 20_000 });
        // Queued, and listening for the release that hands it the lock.
        await expect.poll(() => own.redis().exists(`lock:{${key}}:queue`)).toBe(1);
        await expect.poll(async () => ((await own.redis().pubsub('NUMSUB', `lock:{${key}}:released`)) as [string, number])[1]).toBe(1);
        await held.release();
        const lock = await waiting;
        await user.rules('-evalsha', '-eval');
        await expect.poll(() => lock.signal.aborted || events.some((event) => event.type === 'renewed'), { timeout: 10_000 }).toBe(true);
        if (!lock.signal.aborted) {
          await user.rules('+@all');
          await lock.release();
          continue;
        }
        const error = lock.signal.reason as LockLostError;
        expect(error).toBeInstanceOf(LockLostError);
        expect(error.reason).toBe('refused');
        expect(error.message).toMatch(/NOPERM[\s\S]*ACL/);
        expect(error.cause).toBeInstanceOf(RedisLockError);
        expect(events.filter((event) => event.type === 'lost')).toMatchObject([{ type: 'lost', key, reason: 'refused' }]);
        return;
      }
      expect.fail('every round renewed the handed-over lock before its ACL changed');
    } finally {
      subscription.unsubscribe();
    }
  });
});
