/**
 * Found by review of 8cb3b55 + 74245fa (`joined`, `queued`, `confirmGrants` in
 * lib/core/engine/acquisition.ts), fixed since (`queuedAgain`).
 *
 * DEFECT: a waiter whose place was lost is told so only by the ONE attempt that queues it anew
 * (`joined` 1); when that attempt's reply never reaches the Acquisition, every later busy reply
 * says `joined: false` (the waiter is queued again by then), `confirmGrants` is never set, and a
 * grant made before the loss is handed out without confirmation, beside the new holder: the very
 * violation 8cb3b55 set out to close (explorer seed 491271).
 *
 * How the reply goes missing while the script ran, both on clients the module accepts:
 * - ioredis (the default; the driver refuses `autoResendUnfulfilledCommands: false`): a connection
 *   that closes with the attempt unanswered sends it again once reconnected (ioredis-driver.ts
 *   `connectionResets`, line 72, says so). The first run re-queued the waiter (joined 1, reply
 *   lost), the resent run finds it queued and answers joined 0. `answered()` (acquisition.ts
 *   line 334, `if (outcome.joined === true)`) sees only the second reply; nothing compares
 *   `connectionResets()` across the attempt.
 * - node-redis: an in-flight command is rejected when its socket closes. `failed()` (acquisition.ts
 *   line 356, 74245fa: "counts as queued") sets `queued = true` but, for a waiter queued already, not
 *   `confirmGrants`, although the lost attempt may be the one that queued it anew.
 * Then: the next attempt answers busy with `joined: false` and the restarted fencing counter (1),
 * below the stale grant's token (5), so `staleThrough(1)` keeps the grant kept in the GrantInbox
 * while that attempt was in flight; `lastAttemptAt` is that attempt's start (line 345), so
 * `waitForTurn()` (line 407) calls `takeGrant()`, which
 * finds the 1 s grant lease fresh and hands the lock out with token 5 while "X" holds it in Redis.
 * Fix direction: an attempt of a queued waiter whose effect is unknown (no reply, or a reply
 * across a connection reset) must set `confirmGrants` as a `joined` reply does.
 *
 * Driven by hand, as test/stale-grant.spec.ts does: the data loss is a FLUSHALL plus a foreign
 * holder "X" and a restarted counter; the grant made before the loss is its release message
 * (`<token>:5`), published while the waiter's attempt is in flight (a subscriber connection that
 * delivered it late). The lost reply is real: a proxy closes the waiter's command connection
 * after its attempt ran in Redis. No timing assertion: the waiter must attempt again before it
 * holds anything, and it is handed a lock instead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { Lock } from '../../lib/index.js';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { nodeRedisLockApp, nodeRedisClient } from '../support/node-redis.js';
import { useOwnRedis } from '../support/redis.js';
import { ReplyHoldingProxy } from './support/reply-holding-proxy.js';
import { queuedWaiterToken } from './support/queued-waiter.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;
interface AttemptRecord {
  settled: boolean;
  outcome?: unknown;
  error?: unknown;
}

const KEY = 'k';
const LOCK = 'lock:{k}';
const TTL = 10_000;

describe('a waiter whose re-joining attempt lost its reply (Redis lost its data meanwhile)', () => {
  const own = useOwnRedis();
  let proxy: ReplyHoldingProxy | undefined;
  let app: LockApp | undefined;
  afterEach(async () => {
    await own.redis().del(LOCK);
    await app?.close().catch(() => undefined);
    await proxy?.close();
    app = proxy = undefined;
  });

  async function scenario(open: (url: string) => Promise<LockApp>): Promise<{ first: unknown; lost: AttemptRecord }> {
    const redis = own.redis();
    proxy = await ReplyHoldingProxy.start(own.server().port);
    // Another process holds the lock (no expiry, so the waiter sleeps its refreshes, 250 ms).
    await redis.set(LOCK, 'H');
    app = await open(proxy.url);
    const manager = app.locks[LOCK_RUNNER] as unknown as {
      attempt: Attempt;
      notifier: { channels: Map<string, { live: boolean; waiters: Map<string, { granted?: number }> }> };
    };
    const original = manager.attempt;
    const records: AttemptRecord[] = [];
    // Attempts wait here before they are sent, while `gate` is set.
    let gate: Promise<void> | undefined;
    let openGate: () => void = () => undefined;
    // The next attempt's reply reaches the Acquisition only once this is opened (a slow reply).
    let holdNextReply = false;
    let releaseReply: () => void = () => undefined;
    manager.attempt = function (this: unknown, ...args: unknown[]) {
      const record: AttemptRecord = { settled: false };
      records.push(record);
      const before = gate ?? Promise.resolve();
      const replyHeld = holdNextReply ? new Promise<void>((resolve) => (releaseReply = resolve)) : undefined;
      holdNextReply = false;
      const reply = before
        .then(() => original.apply(this, args))
        .then(async (outcome) => {
          record.settled = true;
          record.outcome = outcome;
          await replyHeld;
          return outcome;
        })
        .catch((error: unknown) => {
          record.settled = true;
          record.error = error;
          throw error;
        });
      return reply;
    };

    const acquiring = app.locks.acquire(KEY, { ttl: TTL, waitTimeout: 60_000 });
    acquiring.catch(() => undefined);
    const token = await queuedWaiterToken(redis, LOCK);
    const channel = () => manager.notifier.channels.get(`${LOCK}:released`);
    // Queued (joined), subscribed, and an attempt answered since: the waiter sleeps to its next refresh.
    await expect.poll(() => channel()?.live === true && records.length >= 2 && records.every((r) => r.settled), { timeout: 10_000, interval: 5 }).toBe(true);
    gate = new Promise<void>((resolve) => (openGate = resolve));
    const lostIndex = records.length;
    await expect.poll(() => records.length, { timeout: 10_000, interval: 5 }).toBe(lostIndex + 1);

    // Redis loses its data (restart, failover): the waiter's place goes, the counter restarts, X holds.
    await redis.flushall();
    await redis.set(LOCK, 'X');
    await redis.set(`${LOCK}:fence`, '1');
    // The waiter's attempt runs in Redis (it queues the waiter anew: joined 1), and its reply is lost.
    const [command] = proxy.commandPairs(LOCK);
    expect(command).toBeDefined();
    command!.held = [];
    gate = undefined;
    openGate();
    await expect.poll(() => redis.zscore(`${LOCK}:waiters`, `${token}:${TTL}`), { timeout: 10_000, interval: 5 }).not.toBeNull();
    // The next attempt's reply comes late: the stale grant's message comes in while it is in flight.
    holdNextReply = true;
    proxy.drop(command!);
    await expect.poll(() => records[lostIndex]!.settled, { timeout: 10_000, interval: 5 }).toBe(true);
    const lost = records[lostIndex]!;

    await expect.poll(() => records.length, { timeout: 10_000, interval: 5 }).toBe(lostIndex + 2);
    // The grant made before the loss (token 5; the message of a release before it), read late.
    await redis.publish(`${LOCK}:released`, `${token}:5`);
    await expect.poll(() => channel()?.waiters.get(token)?.granted, { timeout: 10_000, interval: 5 }).toBe(5);
    releaseReply();

    // Redis' word: X holds the lock. The waiter must ask again before it holds anything.
    let raced = false;
    const attemptedAgain = (async () => {
      while (!raced && records.length <= lostIndex + 2) await sleep(5);
      return 'attempted again';
    })();
    const first = await Promise.race([acquiring.then(async (lock: Lock) => ({ handedOut: lock.fencingToken, redisOwner: await redis.get(LOCK) })), attemptedAgain]);
    raced = true;
    expect(await redis.get(LOCK)).toBe('X');
    // Let it have the lock for real, so that the call ends.
    await redis.del(LOCK);
    const lock = await acquiring;
    await lock.release().catch(() => undefined);
    return { first, lost };
  }

  it('ioredis resends the attempt after the reset (the second run answers joined 0): the waiter confirms the grant from before the loss instead of holding it', { timeout: 60_000 }, async () => {
    const { first, lost } = await scenario((url) => createLockApp({ redis: url }));
    // The mechanism: the lost attempt was sent again and answered as a mere refresh.
    expect(lost.outcome).toMatchObject({ fence: 1, joined: false });
    expect(first).toBe('attempted again');
  });

  it('node-redis rejects the attempt at the reset: the waiter confirms the grant from before the loss instead of holding it', { timeout: 60_000 }, async () => {
    const { first, lost } = await scenario(async (url) => nodeRedisLockApp([await nodeRedisClient(url)]));
    expect(lost.error).toBeDefined();
    expect(first).toBe('attempted again');
  });
});
