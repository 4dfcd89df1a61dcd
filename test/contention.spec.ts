import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../lib/index.js';
import { WAITER_LEASE_MS, type LockManager } from '../lib/core/engine/lock-manager.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { createLockApp, sleep, useLockApps, type LockApp } from './support/lock-app.js';
import { countAttempts, recordWakes, releaseBetweenPolls, type WakeStep } from './support/mechanism.js';
import { isScriptCall, lockScriptKind, watchCommands } from './support/monitor.js';
import { useRedis } from './support/redis.js';

/** Pub/sub channels are server-wide, so every test uses keys no other test file uses. */
const uniqueKey = () => `contended-${randomUUID().slice(0, 8)}`;

describe('waiting for a busy lock', () => {
  const redis = useRedis();
  const app = useLockApps();
  const managerOf = (lockApp: LockApp) => (lockApp.locks as unknown as { [LOCK_RUNNER]: LockManager })[LOCK_RUNNER];

  async function subscribedChannels(key: string): Promise<string[]> {
    return (await redis.pubsub('CHANNELS', `*${key}*`)) as string[];
  }

  it.each([
    ['in another process (release message)', true],
    ['in the same process (local handoff)', false],
  ])('wakes a waiter %s by the release, not by polling, long before the ttl', async (_where, separate) => {
    const holderApp = await app({ ttl: 30_000 });
    const waiterApp = separate ? await app({ ttl: 30_000 }) : holderApp;
    const key = uniqueKey();
    const held = await holderApp.locks.acquire(key);
    const attempts = countAttempts(waiterApp.locks);
    const waiting = waiterApp.locks.acquire(key, { waitTimeout: 10_000 });
    // Once subscribed: under load, the first answer can come before the waiter subscribed, and
    // its second attempt then goes out after the release.
    const { lock, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting, 'watching');
    // A poll would have made an attempt (and found the lock handed to it); the ttl is 30 s.
    expect(attemptsSinceRelease).toBe(0);
    expect(lock.fencingToken).toBe(held.fencingToken + 1);
    await lock.release();
    // The subscription lingers a moment for the next waiter of the process, then goes.
    await expect.poll(() => subscribedChannels(key), { timeout: 5_000 }).toEqual([]);
  });

  it('does not miss a release that happens between a failed attempt and the subscription', async () => {
    const holderApp = await app({ ttl: 30_000 });
    const waiterApp = await app({ ttl: 30_000 });
    const key = uniqueKey();
    const held = await holderApp.locks.acquire(key);
    const notifier = (managerOf(waiterApp) as unknown as { notifier: { watch: (...args: unknown[]) => unknown } }).notifier;
    const watch = notifier.watch.bind(notifier);
    const attempts = countAttempts(waiterApp.locks);
    // The waiter's first attempt has failed; the holder releases before the waiter subscribes,
    // so the release message reaches nobody.
    notifier.watch = (...args: unknown[]) => {
      const subscribed = held.release().then(() => {
        return watch(...args) as { ready: Promise<void>; nextTurn(): Promise<void>; close(): void };
      });
      return {
        ready: subscribed.then((real) => real.ready),
        nextTurn: () => subscribed.then((real) => real.nextTurn()),
        close: () => void subscribed.then((real) => real.close()),
      };
    };
    const lock = await waiterApp.locks.acquire(key, { waitTimeout: 10_000 });
    // The attempt that failed, then the one right after subscribing found the lock handed to
    // it: no poll (a missed release would leave the waiter to its next poll, a third attempt).
    expect(attempts.count).toBe(2);
    await lock.release();
  });

  it('takes the lock once a crashed holder lease runs out, without any release message', async () => {
    const waiterApp = await app();
    const key = uniqueKey();
    const commands = await watchCommands(`lock:{${key}}`);
    await redis.set(`lock:{${key}}`, 'crashed-holder', 'PX', 1_000);
    const lock = await waiterApp.locks.acquire(key, { waitTimeout: 5_000 });
    await commands.stop();
    // On Redis's clock: every attempt before the lease ran out was refused, and the first one
    // after it took the lock.
    const setAt = commands.seen.find((c) => c.args[0]!.toLowerCase() === 'set')!.serverAt;
    const attempts = commands.seen.filter((c) => lockScriptKind(c) === 'acquire');
    const after = attempts.filter((c) => c.serverAt >= setAt + 1_000);
    expect(attempts.length).toBeGreaterThan(after.length);
    expect(after).toHaveLength(1);
    expect(after[0]).toBe(attempts[attempts.length - 1]);
    await lock.release();
  });

  it('ends a wait at waitTimeout, leaving no subscription (after it lingered) and no place in the queue', async () => {
    const waiterApp = await app();
    const key = uniqueKey();
    await redis.set(`lock:{${key}}`, 'holder', 'PX', 10_000);
    const error = await waiterApp.locks.acquire(key, { waitTimeout: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    await expect.poll(() => subscribedChannels(key), { timeout: 5_000 }).toEqual([]);
    expect(await redis.exists(`lock:{${key}}:queue`, `lock:{${key}}:waiters`)).toBe(0);
  });

  it("ends a wait on the caller's AbortSignal, leaving no subscription (after it lingered) and no place in the queue", async () => {
    const waiterApp = await app();
    const key = uniqueKey();
    await redis.set(`lock:{${key}}`, 'holder', 'PX', 10_000);
    const reason = new Error('gave up');
    const controller = new AbortController();
    const attempts = countAttempts(waiterApp.locks);
    const waiting = waiterApp.locks.acquire(key, { waitTimeout: 10_000, signal: controller.signal });
    // Subscribed and queued (not "within 100 ms", which a loaded machine may not be).
    await attempts.watching();
    attempts.stop();
    expect(await subscribedChannels(key)).toHaveLength(1);
    expect(await redis.llen(`lock:{${key}}:queue`)).toBe(1);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect.poll(() => subscribedChannels(key), { timeout: 5_000 }).toEqual([]);
    expect(await redis.exists(`lock:{${key}}:queue`, `lock:{${key}}:waiters`)).toBe(0);
  });

  it('keeps a subscription briefly for the next waiter of the process, which then asks once, and ends it at shutdown', async () => {
    const holderApp = await app({ ttl: 30_000 });
    const waiterApp = await app({ ttl: 30_000 });
    const key = uniqueKey();
    const attempts = countAttempts(waiterApp.locks);
    for (let round = 0; round < 2; round++) {
      const held = await holderApp.locks.acquire(key);
      const waiting = waiterApp.locks.acquire(key, { waitTimeout: 10_000 });
      // Round 0 subscribes; round 1 finds the subscription its predecessor left lingering.
      if (round === 0) await attempts.watching();
      else await attempts.answered();
      await held.release();
      const lock = await waiting;
      // Round 0: the attempt, the one after subscribing (and perhaps a poll); round 1: one.
      if (round === 1) expect(attempts.countFor(lock)).toBe(1);
      await lock.release();
    }
    expect(await subscribedChannels(key)).toHaveLength(1);
    await waiterApp.close();
    await expect.poll(() => subscribedChannels(key), { timeout: 5_000 }).toEqual([]);
  });

  it('leaves no subscription behind a lock taken at the first attempt while the channel lingered', async () => {
    const lockApp = await app({ ttl: 30_000 });
    const key = uniqueKey();
    const held = await lockApp.locks.acquire(key);
    const waiting = lockApp.locks.acquire(key, { waitTimeout: 10_000 });
    await held.release();
    await (await waiting).release();
    // The channel lingers for the next waiter: this caller watches it ahead of its attempt,
    // which finds the lock free. Its watch must end with the call, as a waiter's does.
    for (let i = 0; i < 3; i++) await (await lockApp.locks.acquire(key)).release();
    await expect.poll(() => subscribedChannels(key), { timeout: 5_000 }).toEqual([]);
  });

  it('keeps at most 64 subscriptions lingering, then none', async () => {
    const waiterApp = await app();
    const prefix = uniqueKey();
    const keys = Array.from({ length: 65 }, (_, i) => `${prefix}-${i}`);
    for (const key of keys) await redis.set(`lock:{${key}}`, 'holder', 'PX', 30_000);
    const giveUp = new AbortController();
    const waits = keys.map((key) => waiterApp.locks.acquire(key, { waitTimeout: 20_000, signal: giveUp.signal }).catch(() => undefined));
    await expect.poll(async () => (await subscribedChannels(prefix)).length, { timeout: 10_000 }).toBe(65);
    // Every wait ends: each channel lingers, and the 65th sends the one that lingered longest.
    giveUp.abort(new Error('gave up'));
    await Promise.all(waits);
    const channels = (managerOf(waiterApp) as unknown as { notifier: { channels: Map<string, unknown> } }).notifier.channels;
    expect(channels.size).toBe(64);
    await expect.poll(async () => (await subscribedChannels(prefix)).length, { timeout: 5_000 }).toBe(0);
  });

  it('wakes only the waiter whose turn it is: no stampede on one release, and turns in arrival order', async () => {
    const holderApp = await app({ ttl: 30_000 });
    const waiterApp = await app({ ttl: 30_000 });
    const key = uniqueKey();
    const held = await holderApp.locks.acquire(key);
    const wakes = recordWakes(waiterApp.locks);
    const order: number[] = [];
    let beforeFirstRun: WakeStep[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      // Join in turn: the next one asks once this one's attempt has queued it (a fixed pause
      // let a waiter slowed by a loaded machine queue behind the next one).
      const queued = countAttempts(waiterApp.locks);
      waiters.push(
        waiterApp.locks.using(key, async () => {
          if (i === 0) beforeFirstRun = [...wakes.steps];
          order.push(i);
          await sleep(100);
        }, { waitTimeout: 10_000 }),
      );
      await queued.answered();
      queued.stop();
    }
    await held.release();
    await Promise.all(waiters);
    wakes.stop();
    // The release woke at most the one waiter it handed the lock to, and nobody else: no "lock
    // freed" message that would send the others to Redis. (The first one's poll may find the
    // lock handed to it before the message comes, on a loaded machine: then no wake-up at all.
    // The others' polls, which keep their places, are not wake-ups.)
    const woken = (steps: readonly WakeStep[]) => steps.filter((step) => step === 'granted' || step === 'freed');
    expect(['granted']).toEqual(expect.arrayContaining(woken(beforeFirstRun)));
    expect(woken(beforeFirstRun).length).toBeLessThanOrEqual(1);
    // Each later release (local handoff) did the same: at most one grant per turn, no "freed".
    expect(woken(wakes.steps)).not.toContain('freed');
    expect(woken(wakes.steps).length).toBeLessThanOrEqual(5);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('serves waiters first come, first served: a greedy holder cannot starve them', async () => {
    const greedyApp = await app({ ttl: 30_000 });
    const patientApp = await app({ ttl: 30_000 });
    const key = uniqueKey();
    let greedyTurns = 0;
    let patientTurns = 0;
    let stop = false;
    const greedy = (async () => {
      while (!stop) {
        await greedyApp.locks.using(key, () => sleep(2), { waitTimeout: 10_000 });
        greedyTurns++;
      }
    })();
    await sleep(50);
    const greedyBefore = greedyTurns;
    const patient = (async () => {
      for (let i = 0; i < 20; i++) {
        await patientApp.locks.using(key, () => sleep(2), { waitTimeout: 10_000 });
        patientTurns++;
      }
      stop = true;
    })();
    await Promise.all([greedy, patient]);
    expect(patientTurns).toBe(20);
    // Strict turns: the greedy worker got in at most once between two of the patient's turns.
    expect(greedyTurns - greedyBefore).toBeLessThanOrEqual(patientTurns + 2);
  });

  it('skips a waiter that died in the queue once its place expires', async () => {
    const holderApp = await app({ ttl: 30_000 });
    const key = uniqueKey();
    const held = await holderApp.locks.acquire(key);
    // A waiter that joined the queue and then vanished (its process crashed).
    const names = { lock: `lock:{${key}}`, queue: `lock:{${key}}:queue`, waiters: `lock:{${key}}:waiters` };
    const time = await redis.time();
    const serverNow = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    await redis.rpush(names.queue, 'dead-waiter:30000');
    await redis.zadd(names.waiters, serverNow + 300, 'dead-waiter:30000');
    const waiterApp = await app();
    const attempts = countAttempts(waiterApp.locks);
    const waiting = waiterApp.locks.acquire(key, { waitTimeout: 60_000 });
    // The live waiter has tried and queued behind the dead one (however long that took).
    await attempts.answered();
    expect((await redis.lrange(names.queue, 0, -1)).filter((entry) => entry !== 'dead-waiter:30000')).toHaveLength(1);
    await held.release();
    // The release hands the lock to the dead waiter on a waiter's lease, not on its own 30 s ttl
    // (or skips it, if its place ran out first: a slow machine); once that lease runs out the
    // live waiter takes the lock.
    if ((await redis.get(names.lock)) === 'dead-waiter') expect(await redis.pttl(names.lock)).toBeLessThanOrEqual(WAITER_LEASE_MS);
    const lock = await waiting;
    expect(lock.held).toBe(true);
    await lock.release();
  });

  it('drops a malformed queue entry instead of failing every release', async () => {
    const holderApp = await app();
    const key = uniqueKey();
    const held = await holderApp.locks.acquire(key);
    await redis.rpush(`lock:{${key}}:queue`, 'garbage');
    await redis.zadd(`lock:{${key}}:waiters`, Date.now() * 10, 'garbage');
    await held.release();
    expect(await redis.exists(`lock:{${key}}`, `lock:{${key}}:queue`)).toBe(0);
  });
});

describe('batched renewal', () => {
  const redis = useRedis();
  let lockApp: LockApp | undefined;
  afterEach(() => lockApp?.close());

  it('renews many locks with one script call per interval, and reports exactly the one stolen', async () => {
    lockApp = await createLockApp({ ttl: 1_500, renewInterval: 300 });
    const prefix = uniqueKey();
    const locks = await Promise.all(Array.from({ length: 300 }, (_, i) => lockApp!.locks.acquire(`${prefix}:${i}`)));
    const commands = await watchCommands(`lock:{${prefix}:7}`);
    const watchedFrom = performance.now();
    await sleep(1_000);
    await redis.del(`lock:{${prefix}:7}`);
    await new Promise((resolve) => (locks[7]!.signal.aborted ? resolve(undefined) : locks[7]!.signal.addEventListener('abort', resolve, { once: true })));
    await sleep(400);
    await commands.stop();
    const watched = performance.now() - watchedFrom;
    const renewCalls = commands.seen.filter((c) => isScriptCall(c) && Number(c.args[2]) === 300);
    // One call per 300 ms, each renewing all 300 locks: a loaded machine may run fewer ticks
    // in the time watched, never more.
    expect(renewCalls.length).toBeGreaterThanOrEqual(1);
    expect(renewCalls.length).toBeLessThanOrEqual(Math.ceil(watched / 300) + 1);
    expect(locks[7]!.signal.reason).toMatchObject({ reason: 'refused' });
    const others = locks.filter((_, i) => i !== 7);
    expect(others.every((lock) => lock.held && !lock.signal.aborted)).toBe(true);
    expect(await redis.pttl(`lock:{${prefix}:0}`)).toBeGreaterThan(1_000);
    await Promise.all(locks.map((lock) => lock.release()));
  });
});
