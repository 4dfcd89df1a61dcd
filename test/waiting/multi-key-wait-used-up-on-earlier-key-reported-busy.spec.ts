import { afterEach, describe, expect, it } from 'vitest';
import { LockNotAcquiredError, type LockEvent } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review (thirty-fourth session): a multi-key acquire shares one waitTimeout across its
 * keys. When the wait ran out while it was on an earlier key (here, Redis answered that key's
 * attempt only after the waitTimeout, within the grace a late answer gets), the next key had no
 * wait left and got one try; found busy, its `not-acquired` event said `outcome: 'busy'` ("held by
 * another, and the call did not wait"), and so did the metrics' `lock.result`, for a call that did
 * wait and whose wait ran out: `timeout`. Redis is paused (its own server) for longer than the
 * waitTimeout: no duration is asserted, only what the event says.
 */
describe('a multi-key acquire whose wait ran out before its later busy key', () => {
  const own = useOwnRedis();
  const apps: LockApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it("reports the later key's refusal as a timeout, not as busy", async () => {
    const holder = await createLockApp({ redis: own.url(), ttl: 30_000 });
    const caller = await createLockApp({ redis: own.url(), ttl: 30_000 });
    apps.push(holder, caller);
    const heldB = await holder.locks.acquire('acct:b');
    const events: LockEvent[] = [];
    const subscription = caller.locks.events$.subscribe((event) => events.push(event));
    // Every command waits for the pause: the attempt at 'acct:a' is answered after the
    // waitTimeout, within its grace (1 s), and takes the free key.
    await own.redis().call('CLIENT', 'PAUSE', '600', 'ALL');
    const error = await caller.locks.acquire(['acct:a', 'acct:b'], { waitTimeout: 200 }).catch((caught: unknown) => caught);
    subscription.unsubscribe();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as LockNotAcquiredError).key).toBe('acct:b');
    expect((error as LockNotAcquiredError).waitedMs).toBeGreaterThanOrEqual(200);
    // 'acct:a' was taken, then given back.
    expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual(['acct:a']);
    const refused = events.find((event) => event.type === 'not-acquired');
    expect(refused).toMatchObject({ key: 'acct:b', outcome: 'timeout' });
    expect(await caller.locks.isLocked('acct:a')).toBe(false);
    await heldB.release();
  });
});
