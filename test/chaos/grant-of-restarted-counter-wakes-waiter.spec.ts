/**
 * Found by review of 8cb3b55 (`confirmGrants` in lib/core/engine/acquisition.ts) with the GrantInbox
 * (lib/core/engine/grant-inbox.ts); fixed since (`GrantInbox.wakeOnEveryGrant`).
 *
 * DEFECT (liveness, the path confirmGrants was made for): after Redis lost its data the fencing
 * counter restarts, yet `GrantInbox.deliver()` (grant-inbox.ts line 25) still drops every grant whose token is not above
 * the newest it saw ("fencing tokens of one key only grow, so a token not above the newest seen
 * is a copy"). The stale pre-loss grant (token 5) that confirmGrants correctly refused to take
 * set `newest` to 5, so the genuine grant of the restarted counter (token 2, the next holder's
 * release handing the lock to this waiter) is dropped as a "copy": the waiter is not woken. It
 * holds the lock in Redis on a grant lease and does not know: the lock sits idle until the
 * waiter's next refresh poll (up to 250 ms per grant, for every grant until the new counter
 * passes the old one), instead of the immediate confirming attempt the commit promises ("the
 * message only wakes it and its next acquire confirms the grant"). Once grants are only wake-ups
 * (confirmGrants), nothing needs dropping; at the least `newest` must not survive a `joined`.
 *
 * Proof without timing: the waiter's polls are held (test/support/mechanism.ts `holdPolls`), so
 * only a release message can wake it; it must then attempt (and confirm the grant). On this code
 * it never does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { holdPolls, type HeldPolls } from '../support/mechanism.js';
import { useOwnRedis } from '../support/redis.js';
import { queuedWaiterToken } from './support/queued-waiter.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;
interface AttemptRecord {
  settled: boolean;
  outcome?: unknown;
}

const LOCK = 'lock:{k}';

describe('a grant of the restarted counter after a refused stale grant', () => {
  const own = useOwnRedis();
  const apps: LockApp[] = [];
  let held: HeldPolls | undefined;
  afterEach(async () => {
    held?.resume();
    held = undefined;
    await own.redis().del(LOCK);
    await Promise.all(apps.splice(0).map((app) => app.close().catch(() => undefined)));
  });

  it('wakes the waiter (its next attempt confirms the grant) instead of being dropped as a copy of the stale one', { timeout: 60_000 }, async () => {
    const redis = own.redis();
    await redis.set(LOCK, 'H');
    const waiter = await createLockApp({ redis: own.url() });
    const holder = await createLockApp({ redis: own.url() });
    apps.push(waiter, holder);
    const manager = waiter.locks[LOCK_RUNNER] as unknown as {
      attempt: Attempt;
      notifier: { channels: Map<string, { live: boolean; waiters: Map<string, { newest: number }> }> };
    };
    const original = manager.attempt;
    const records: AttemptRecord[] = [];
    let gate: Promise<void> | undefined;
    let openGate: () => void = () => undefined;
    manager.attempt = function (this: unknown, ...args: unknown[]) {
      const record: AttemptRecord = { settled: false };
      records.push(record);
      const reply = (gate ?? Promise.resolve()).then(() => original.apply(this, args));
      reply.then(
        (outcome) => Object.assign(record, { settled: true, outcome }),
        () => Object.assign(record, { settled: true }),
      );
      return reply;
    };
    const settled = (): boolean => records.every((record) => record.settled);

    const acquiring = waiter.locks.acquire('k', { ttl: 10_000, waitTimeout: 60_000 });
    acquiring.catch(() => undefined);
    const token = await queuedWaiterToken(redis, LOCK);
    const channel = () => manager.notifier.channels.get(`${LOCK}:released`);
    await expect.poll(() => channel()?.live === true && records.length >= 2 && settled(), { timeout: 10_000, interval: 5 }).toBe(true);

    // Redis restarts from an older snapshot, its counter back at 1 (a counter lost outright starts
    // again at the server's clock, above the stale grant's token: a rolled-back one does not);
    // another process takes the lock on it (token 2).
    gate = new Promise<void>((resolve) => (openGate = resolve));
    const lossIndex = records.length;
    await expect.poll(() => records.length, { timeout: 10_000, interval: 5 }).toBe(lossIndex + 1);
    await redis.flushall();
    await redis.set(`${LOCK}:fence`, '1');
    const x = await holder.locks.acquire('k', { ttl: 10_000 });
    expect(x.fencingToken).toBe(2);
    gate = undefined;
    openGate();
    // The waiter's next attempt queues it anew: from now on it confirms grants (8cb3b55).
    await expect.poll(() => records[lossIndex]!.settled, { timeout: 10_000, interval: 5 }).toBe(true);
    expect(records[lossIndex]!.outcome).toMatchObject({ fence: 2, joined: true });

    // The message of a grant made before the loss (token 5) comes in: it only wakes the waiter,
    // whose attempt finds X holding (as the commit intends). The inbox now says 5 is the newest.
    await redis.publish(`${LOCK}:released`, `${token}:5`);
    await expect.poll(() => channel()?.waiters.get(token)?.newest, { timeout: 10_000, interval: 5 }).toBe(5);
    await expect.poll(() => records.length > lossIndex + 1 && settled(), { timeout: 10_000, interval: 5 }).toBe(true);

    // From here on the waiter is woken by messages alone: hold its polls, and let the wait armed
    // before the hold end (its attempt answered), so that it now sleeps on a held timer.
    held = holdPolls(waiter.locks);
    const atHold = records.length;
    if (settled()) await expect.poll(() => records.length > atHold && settled(), { timeout: 10_000, interval: 5 }).toBe(true);
    else await expect.poll(() => settled(), { timeout: 10_000, interval: 5 }).toBe(true);

    // X releases: Redis hands the lock to the waiter (token 3 of the rolled-back counter) and
    // publishes it (the waiter's attempt may have confirmed it by now, with token 4).
    const beforeRelease = records.length;
    await x.release();
    expect(await redis.get(LOCK)).toBe(token);
    expect(['3', '4']).toContain(await redis.get(`${LOCK}:fence`));
    // The message must wake the waiter, whose attempt confirms the grant (no poll can: they are held).
    await expect.poll(() => records.length, { timeout: 5_000, interval: 10 }).toBeGreaterThan(beforeRelease);
    const lock = await acquiring;
    // The confirming attempt takes the next token, as a first grant does.
    expect(lock.fencingToken).toBe(4);
    await lock.release();
  });
});
