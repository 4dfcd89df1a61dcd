/**
 * A lock whose acquire reply comes late in its lease (Redis slow to answer, or this process'
 * event loop held up between the send and the reply) is handed out with little of the lease
 * left, and nothing renews it before the watchdog's next tick: a group's first tick comes half
 * an interval to a whole one (ttl/6 to ttl/3) after the lock joined it, an existing group's
 * anywhere within its interval. When less than that is left, the lock is reported lost
 * ('expired') and given back while Redis holds it, healthy and answering, for seconds more.
 *
 * A grant taken late gets the opposite treatment (Acquisition.takeGrant: "A waiter whose grant
 * arrives with less than half of the 1 s left ... renews before it is handed the lock"); the
 * direct acquire path (LockManager.attempt) only refuses a reply that came after the whole
 * lease (STALE_REPLY).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { blockRedis } from '../support/block-redis.js';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('a lock whose acquire reply came late in its lease', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('is renewed before its lease runs out, not reported lost while Redis holds it', { timeout: 20_000 }, async () => {
    // ttl 3 s: the watchdog's interval is 1 s, a new group's first tick 0.5 to 1 s after the lock joined it.
    app = await createLockApp({ redis: own.url(), ttl: 3_000 });
    // Redis answers nothing for 2.6 s: the acquire sent meanwhile runs when the block ends.
    const { ended } = await blockRedis(own.url(), 2_600);
    const lock = await app.locks.acquire('late:reply');
    await ended;
    // Redis set the lease when the script ran, at the end of the block: it has nearly 3 s left.
    const pttlAtHandOut = await own.redis().pttl('lock:{late:reply}');
    expect(pttlAtHandOut).toBeGreaterThan(2_000);
    // Past the local deadline (about 0.4 s away) and well within Redis' lease.
    await sleep(1_200);
    expect({ aborted: lock.signal.aborted, reason: (lock.signal.reason as { reason?: string } | undefined)?.reason, held: lock.held }).toEqual({
      aborted: false,
      reason: undefined,
      held: true,
    });
    expect(await own.redis().exists('lock:{late:reply}')).toBe(1);
    await lock.release();
  });
});
