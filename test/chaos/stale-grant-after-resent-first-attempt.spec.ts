/**
 * Found by review of b71bc5f (`queuedAgain`, `resetsAtSend` in lib/core/engine/acquisition.ts), fixed since.
 *
 * DEFECT: the FIRST attempt of an acquisition (queued = false) whose reply comes across an
 * ioredis connection reset is counted as ONE queuing, although it may have queued the waiter
 * twice: the first run queued it (its reply lost at the reset), a release then granted the lock
 * to it (the grant message reaches its watch, opened by `watchAhead()` because a sibling waiter
 * of this process keeps the channel subscribed), Redis lost its data, and ioredis' resend of
 * the attempt queued it anew. In `answered()` (acquisition.ts line 350,
 * `if (outcome.joined === true || (resent && this.queuingNow)) this.queuedAgain();`) the two
 * facts are OR-ed into a single `queuedAgain()` call, and `queuedAgain()` (line 466) only sets
 * `confirmGrants` when `queued` was already true: on a first attempt it sets `queued` and
 * nothing else. `staleThrough(1)` (restarted counter) keeps the grant with token 5, and
 * `waitOn()` -> `waitForTurn()` (line 420) hands it out via `takeGrant()` while the foreign
 * holder "X" holds the lock in Redis. Fix direction: a reply across a reset to a queuing
 * attempt means "queued by the first run, and maybe anew by the resend": call `queuedAgain()`
 * for each (or treat `resent && queuingNow` as re-joining even when `queued` was false).
 *
 * Harness as test/chaos/stale-grant-after-lost-rejoin-reply.spec.ts: a TCP proxy holds the
 * command connection's replies and closes it (ioredis resends), FLUSHALL + "X" + fence 1 is the
 * data loss, the pre-loss grant is a published `<token>:5`. No timing assertion; the only timing
 * dependence (takeGrant's 1 s lease counted from the attempt's send, acquisition.ts line 435)
 * could only make this spec pass falsely on a very slow machine, never fail falsely.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { Lock } from '../../lib/index.js';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { ReplyHoldingProxy } from './support/reply-holding-proxy.js';

interface Rec {
  token: unknown;
  settled: boolean;
  outcome?: unknown;
}

const KEY = 'k';
const LOCK = 'lock:{k}';
const TTL = 10_000;

describe('first attempt of a waiter, answered across an ioredis reset (resend), Redis lost its data meanwhile', () => {
  const own = useOwnRedis();
  let proxy: ReplyHoldingProxy | undefined;
  let app: LockApp | undefined;
  afterEach(async () => {
    await own.redis().del(LOCK);
    await app?.close().catch(() => undefined);
    await proxy?.close();
    app = proxy = undefined;
  });

  it('confirms the grant from before the loss instead of holding it beside X', { timeout: 60_000 }, async () => {
    const redis = own.redis();
    proxy = await ReplyHoldingProxy.start(own.server().port);
    await redis.set(LOCK, 'H');
    app = await createLockApp({ redis: proxy.url });
    const manager = app.locks[LOCK_RUNNER] as unknown as {
      attempt: (...args: unknown[]) => Promise<unknown>;
      notifier: { channels: Map<string, { live: boolean; waiters: Map<string, { granted?: number }> }> };
    };
    const original = manager.attempt;
    const records: Rec[] = [];
    manager.attempt = function (this: unknown, ...args: unknown[]) {
      const rec: Rec = { token: args[2], settled: false };
      records.push(rec);
      return original.apply(this, args).then(
        (outcome) => {
          rec.settled = true;
          rec.outcome = outcome;
          return outcome;
        },
        (error: unknown) => {
          rec.settled = true;
          throw error;
        },
      );
    };
    const channel = () => manager.notifier.channels.get(`${LOCK}:released`);

    // A sibling waiter keeps the channel subscribed: the next waiter watches ahead of its first attempt.
    const sibling = app.locks.acquire(KEY, { ttl: TTL, waitTimeout: 60_000 });
    sibling.catch(() => undefined);
    await expect.poll(() => channel()?.live === true && records.length >= 2 && records.every((r) => r.settled), { timeout: 10_000, interval: 5 }).toBe(true);
    const [command] = proxy.commandPairs(LOCK);
    expect(command).toBeDefined();
    const siblingMember = (await redis.lrange(`${LOCK}:queue`, 0, -1))[0]!;

    // The waiter's first attempt runs in Redis (queues it, joined 1); its reply is held.
    command!.held = [];
    const before = records.length;
    const acquiring = app.locks.acquire(KEY, { ttl: TTL, waitTimeout: 60_000 });
    acquiring.catch(() => undefined);
    let member: string | undefined;
    while (member === undefined) {
      member = (await redis.lrange(`${LOCK}:queue`, 0, -1)).find((m) => m !== siblingMember);
      if (member === undefined) await sleep(5);
    }
    const token = member.slice(0, member.lastIndexOf(':'));
    const mine = () => records.slice(before).filter((r) => r.token === token);
    expect(mine().length).toBe(1);

    // A release grants it the lock (token 5), then Redis loses its data: X holds, the counter restarted.
    await redis.publish(`${LOCK}:released`, `${token}:5`);
    await expect.poll(() => channel()?.waiters.get(token)?.granted, { timeout: 10_000, interval: 5 }).toBe(5);
    await redis.flushall();
    await redis.set(LOCK, 'X');
    await redis.set(`${LOCK}:fence`, '1');

    // The connection resets: ioredis sends the first attempt again, which queues the waiter anew.
    proxy.drop(command!);
    await expect.poll(() => mine()[0]!.settled, { timeout: 10_000, interval: 5 }).toBe(true);
    expect(mine()[0]!.outcome).toMatchObject({ fence: 1, joined: true });

    // Redis' word: X holds. The waiter must attempt again before it holds anything.
    let raced = false;
    const attemptedAgain = (async () => {
      while (!raced && mine().length < 2) await sleep(5);
      return 'attempted again';
    })();
    const first = await Promise.race([acquiring.then(async (lock: Lock) => ({ handedOut: lock.fencingToken, redisOwner: await redis.get(LOCK) })), attemptedAgain]);
    raced = true;
    expect(await redis.get(LOCK)).toBe('X');
    await redis.del(LOCK);
    await (await acquiring).release().catch(() => undefined);
    await (await sibling).release().catch(() => undefined);
    expect(first).toBe('attempted again');
  });
});
