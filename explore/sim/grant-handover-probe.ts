import { LAST_ATTEMPT_GRACE_MS, WAITER_LEASE_MS, WAITER_REFRESH_MS } from '../../lib/core/engine/waiter-timing.js';
import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import type { Lock } from '../../lib/interfaces/lock.interface.js';
import type { CommandFate } from './network.js';
import { SETTLE_MS, settleCall as settle } from './settle-call.js';
import { KEY_PREFIX, type Instance, type World } from './world.js';

/** Every call's ttl: its grant lease is the whole 1 s waiter lease, its polls 250 ms apart. */
const TTL_MS = 3_000;
/** Every call's waitTimeout: longer than the probe, so none gives up by itself. */
const WAIT_MS = 60_000;
/** A lock handed to a waiter of the process goes on within a few network hops. */
const HANDOVER_MS = 30;
/** A reply Redis never sends, nor any error: the connection frozen for this one command. */
const NEVER: CommandFate = { lost: 'after', delay: 0, frozen: { hold: 0, never: true } };

/**
 * Grants handed to a waiter by a release, in the shapes last session's engine fixes are about,
 * none of which random faults made: each part on a key of its own, after the faults, on the live
 * instances (the first part needs one, the others two), its commands steered one at a time
 * (`World.steerNext`). Draws nothing from the random streams: every run is what it was until it
 * starts.
 *
 * 1. `ga`: a waiter of the holder's process, handed the lock while the holder's release has no
 *    reply yet (it waits for that reply, see `ReleasesOnTheirWay`), has its signal abort then.
 *    docs/locks.md: the signal cancels the wait; an aborted call is never handed the lock (737b217).
 * 2. `gn`: a release Redis never answers, given up at its lease's end; a later grant of the key to
 *    a waiter of that process, by another process' release, comes within a few hops: it waits on
 *    no release that ended (07474d9).
 * 3. `gl`, `gr`: two waiters queued one after the other; the first one's refresh is held up on its
 *    way (it reaches Redis within the 2 s a lapsed waiter keeps its place in), then the release
 *    hands it the lock late in its grant lease: after the whole lease (`gl`, 8ab9e79) or with its
 *    renewal before the handover answered late (`gr`, d4674e3). It keeps its place: it holds the
 *    lock before the second one.
 * 4. `gx`: a waiter handed the lock late in its grant lease has its signal abort while its renewal
 *    before the handover, never answered, is on its way; it gives the grant back, and Redis never
 *    answers that release either. The release is settled (as unanswered) by the end of its lease,
 *    or of the 1 s a release's answer gets: it holds up no `app.close()` (d65d5d8).
 * 5. `gu`: a lock with `autoRenew: false` (a 600 ms ttl, its grant lease as long) handed over by a
 *    release right after its waiter's attempt, and held past its first renewal, a third of the
 *    way into that lease: the renewal renews it to what is left of its ttl, so Redis' lease of it
 *    ends no later than its ttl from when its code started (`lease-past-ttl` of the real-Redis
 *    explorer's unrenewed handover probe: eef575f, seeded bug 100).
 * 6. `gw`: as `gr`, the waiters' watchdog ticking every 100 ms, and the first one's process
 *    stalled from its renewal before the handover until past the grant's deadline; that renewal
 *    is answered 150 ms after it was sent, after the watchdog's next tick was due and before the
 *    deadline. Once the stall ends the timers run in the order they fell due: the tick finds the
 *    lease over first, then the reply comes. The tick forgets the grant as the deadline sweeper
 *    would, and the late reply reads as no answer in time: the waiter asks again under its token
 *    and keeps its place (a695086: the tick declared the grant lost and gave it back; 232c35f:
 *    the reply, after the grant was forgotten, read as refused, and the grant was given back).
 */
export async function grantHandoverProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const live = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  const [a, b] = live;
  if (a === undefined) return;
  await abortedWhileReleaseOnItsWay(world, a, check, stop);
  if (world.violation || b === undefined) return;
  const c = live[2] ?? a;
  await grantBehindUnansweredRelease(world, a, b, check, stop);
  if (world.violation) return;
  await lateGrantKeepsPlace(world, 'gl', [a, b, c], undefined, check, stop);
  if (world.violation) return;
  await lateGrantKeepsPlace(world, 'gr', [a, b, c], { delay: 600 }, check, stop);
  if (world.violation) return;
  await abortedDuringRenewalBeforeHandover(world, a, b, check, stop);
  if (world.violation) return;
  await unrenewedHandover(world, a, b, check, stop);
  if (world.violation) return;
  await lateGrantKeepsPlace(world, 'gw', [a, b, c], { delay: STALLED_REPLY_MS }, check, stop, WATCHDOG_MS);
}

/** Part 6: the waiters' watchdog interval, and the delay of the renewal's reply (past one interval). */
const WATCHDOG_MS = 100;
const STALLED_REPLY_MS = 150;

/** Part 1 (see above). */
async function abortedWhileReleaseOnItsWay(world: World, a: Instance, check: () => void, stop: () => boolean): Promise<void> {
  const key = 'ga';
  const holder = await settle(world, a.service.acquire(key, { ttl: TTL_MS, waitTimeout: WAIT_MS }), check, stop);
  if (holder === undefined) return;
  const caller = new AbortController();
  const reason = new Error('the caller went away');
  // Filled by the call (an object: a closure's writes narrow nothing).
  const call: { ran?: true; outcome?: unknown } = {};
  void a.service.using(key, () => void (call.ran = true), { ttl: TTL_MS, waitTimeout: WAIT_MS, signal: caller.signal }).then(
    () => (call.outcome = 'acquired'),
    (error: unknown) => (call.outcome = error),
  );
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation || call.outcome !== undefined) return;
  // The release runs in the store at once (its message hands the lock over); its reply comes later.
  world.steerNext(a, 'release', lockRedisKeys(KEY_PREFIX, key).lock, { delay: 10 * HANDOVER_MS });
  world.trace(a, `grant-handover probe: releases ${key} #${holder.fencingToken} to a waiter of its process, its reply late`);
  let released = false;
  void holder.release().finally(() => (released = true)).catch(() => undefined);
  await world.scheduler.run(world.scheduler.now + HANDOVER_MS / 2, check, stop);
  if (world.violation) return;
  world.trace(a, `grant-handover probe: the waiter's signal aborts`);
  caller.abort(reason);
  await world.scheduler.run(world.scheduler.now + 20 * HANDOVER_MS, check, () => stop() || (released && call.outcome !== undefined));
  if (world.violation || !a.alive || a.paused) return;
  const { ran, outcome } = call;
  if (ran === true || outcome !== reason) {
    world.violate(a, 'a call whose signal aborted is never handed the lock', `${key}: the waiter's signal aborted at the release; its call ${ran ? 'ran its work, then ' : ''}${describe(outcome)}`);
  }
}

function describe(outcome: unknown): string {
  if (outcome === undefined) return 'had not settled';
  return `ended: ${outcome instanceof Error ? outcome.message : String(outcome)}`;
}

/** Part 2 (see above). */
async function grantBehindUnansweredRelease(world: World, a: Instance, b: Instance, check: () => void, stop: () => boolean): Promise<void> {
  const key = 'gn';
  const short = 10 * HANDOVER_MS;
  const first = await settle(world, a.service.acquire(key, { ttl: short, waitTimeout: WAIT_MS }), check, stop);
  if (first === undefined) return;
  world.steerNext(a, 'release', lockRedisKeys(KEY_PREFIX, key).lock, NEVER);
  world.trace(a, `grant-handover probe: releases ${key} #${first.fencingToken}, a release Redis never answers`);
  let givenUp = false;
  void first.release().finally(() => (givenUp = true)).catch(() => undefined);
  // Given up at the end of its lease (or of the 1 s a release's answer gets), told `released` then.
  await world.scheduler.run(world.scheduler.now + TTL_MS, check, () => stop() || givenUp);
  if (world.violation || !givenUp) return;
  const other = await settle(world, b.service.acquire(key, { ttl: TTL_MS, waitTimeout: WAIT_MS }), check, stop);
  if (other === undefined) return;
  let heldAt: number | undefined;
  let done = false;
  void a.service
    .using(key, () => void (heldAt = world.scheduler.now), { ttl: TTL_MS, waitTimeout: WAIT_MS })
    .catch((error: unknown) => world.trace(a, `grant-handover probe: ${key}'s waiter failed: ${(error as Error).message}`))
    .finally(() => (done = true));
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation || done) return;
  world.trace(b, `grant-handover probe: releases ${key} #${other.fencingToken} to ${a.name}'s waiter`);
  const releasedAt = world.scheduler.now;
  void other.release().catch(() => undefined);
  await world.scheduler.run(world.scheduler.now + TTL_MS, check, () => stop() || done);
  if (world.violation || !a.alive || a.paused || !b.alive || b.paused) return;
  if (heldAt === undefined || heldAt - releasedAt > HANDOVER_MS) {
    world.violate(a, 'a grant to a waiter waits on no release its process gave up', `${key}: ${b.name} released it at ${releasedAt} ms to ${a.name}'s waiter, ${heldAt === undefined ? 'which never held it' : `which held it ${heldAt - releasedAt} ms later`}; ${a.name}'s release of #${first.fencingToken}, never answered, was given up at its lease's end`);
  }
}

/**
 * Parts 3 and 6 (see above): `renewal`, the fate of the first waiter's renewal before the handover
 * (none: the grant's whole lease is gone by then); `stalledWatchdog`, part 6's watchdog interval
 * (the first waiter's process then stalls from that renewal until past the grant's deadline).
 */
async function lateGrantKeepsPlace(world: World, key: string, [a, b, c]: [Instance, Instance, Instance], renewal: CommandFate | undefined, check: () => void, stop: () => boolean, stalledWatchdog?: number): Promise<void> {
  const holder = await settle(world, a.service.acquire(key, { ttl: TTL_MS, waitTimeout: WAIT_MS }), check, stop);
  if (holder === undefined) return;
  const order: string[] = [];
  let done = 0;
  const wait = (instance: Instance, who: string): void => {
    void instance.service
      .using(key, () => void order.push(who), { ttl: TTL_MS, waitTimeout: WAIT_MS, ...(stalledWatchdog !== undefined && { renewInterval: stalledWatchdog }) })
      .catch((error: unknown) => world.trace(instance, `grant-handover probe: ${key}'s ${who} waiter failed: ${(error as Error).message}`))
      .finally(() => done++);
  };
  wait(b, 'first');
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation) return;
  wait(c, 'second');
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation || done > 0) return;
  // The refresh reaches the store after the whole grant lease counted from it, or with a third
  // of it left (a renewal before the handover, whose reply `renewal` holds back).
  const renewed = renewal === undefined ? undefined : world.steerNext(b, 'renew', lockRedisKeys(KEY_PREFIX, key).lock, renewal);
  if (!(await releaseAfterLateRefresh(world, a, b, key, holder, renewal === undefined ? 1_100 : 700, check, stop))) return;
  if (stalledWatchdog !== undefined && renewed !== undefined) {
    await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS, check, () => stop() || renewed.at !== undefined);
    if (world.violation || renewed.at === undefined || !b.alive || b.paused) return;
    // Under half of the grant lease was left when the renewal went out: past its deadline then.
    world.pause(b, WAITER_LEASE_MS / 2 + SETTLE_MS, 'grant-handover probe: its event loop blocked from its renewal before the handover');
  }
  await world.scheduler.run(world.scheduler.now + 2 * TTL_MS, check, () => stop() || done === 2);
  if (world.violation || [a, b, c].some((i) => !i.alive || i.paused)) return;
  if (order.join() !== 'first,second') {
    world.violate(b, 'waiters get the lock in queue order', `${key}: ${b.name}'s waiter, handed the lock late in its grant lease${renewal === undefined ? '' : ', its renewal before the handover answered late'}${stalledWatchdog === undefined ? '' : ` after its process stalled past the grant's deadline, its watchdog's tick due first`}, and ${c.name}'s behind it got it in order ${order.join(',') || '(none)'}`);
  }
}

/** Part 4 (see above). */
async function abortedDuringRenewalBeforeHandover(world: World, a: Instance, b: Instance, check: () => void, stop: () => boolean): Promise<void> {
  const key = 'gx';
  const holder = await settle(world, a.service.acquire(key, { ttl: TTL_MS, waitTimeout: WAIT_MS }), check, stop);
  if (holder === undefined) return;
  const caller = new AbortController();
  let done = false;
  void b.service
    .using(key, () => undefined, { ttl: TTL_MS, waitTimeout: WAIT_MS, signal: caller.signal })
    .catch(() => undefined)
    .finally(() => (done = true));
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation || done) return;
  const lockKey = lockRedisKeys(KEY_PREFIX, key).lock;
  const renewal = world.steerNext(b, 'renew', lockKey, NEVER);
  const giveBack = world.steerNext(b, 'release', lockKey, NEVER);
  if (!(await releaseAfterLateRefresh(world, a, b, key, holder, 700, check, stop))) return;
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || renewal.at !== undefined);
  if (world.violation || renewal.at === undefined || done) return;
  // What the close would wait for: the clean-ups begun from here (the give-back among them).
  const cleanUps = (b.service as unknown as { manager: { pendingCleanups: Set<Promise<unknown>> } }).manager.pendingCleanups;
  const before = new Set(cleanUps);
  world.trace(b, `grant-handover probe: the waiter's signal aborts during its renewal before the handover`);
  const abortedAt = world.scheduler.now;
  caller.abort(new Error('the caller went away'));
  // The give-back: the clean-ups begun from the abort until its release went out. Not those begun
  // later: another key's waiter of this instance whose waitTimeout ran out meanwhile leaves its
  // queue, and again once its attempt settles, which a frozen store may never answer (seed 7158
  // schedule 286: a leave of `m` begun 22 ms before the check, bounded by the close's own).
  await world.scheduler.run(abortedAt + SETTLE_MS, check, () => stop() || giveBack.at !== undefined);
  if (world.violation) return;
  const begun = [...cleanUps].filter((work) => !before.has(work));
  // The grant's lease, or the 1 s grace its give-back's answer gets, from the abort: then some slack.
  await world.scheduler.run(abortedAt + LAST_ATTEMPT_GRACE_MS + 2 * SETTLE_MS, check, stop);
  if (world.violation || !b.alive || b.paused || b.stopping) return;
  const left = begun.filter((work) => cleanUps.has(work)).length;
  if (left > 0) {
    world.violate(b, 'a give-back Redis never answers is settled by the end of its lease', `${key}: ${b.name}'s waiter, aborted at ${abortedAt} ms during its renewal before the handover, gave the grant back; ${left} clean-up(s) begun with that give-back still pending at ${world.scheduler.now} ms, which its close would wait for`);
  }
}

/** Part 5 (see above). */
async function unrenewedHandover(world: World, a: Instance, b: Instance, check: () => void, stop: () => boolean): Promise<void> {
  const key = 'gu';
  const ttl = 20 * HANDOVER_MS;
  const holder = await settle(world, a.service.acquire(key, { ttl: TTL_MS, waitTimeout: WAIT_MS }), check, stop);
  if (holder === undefined) return;
  let heldAt: number | undefined;
  let renewed: HeldLock | undefined;
  let done = false;
  void b.service
    .using(key, async (lock) => {
      heldAt = world.scheduler.now;
      const internals = lock as unknown as { renewalApplied: number };
      // Past its first renewal (a third of its 600 ms lease), within its ttl.
      while (internals.renewalApplied === 0 && world.scheduler.now - heldAt < ttl / 2 && !lock.signal.aborted) await b.sleep(1);
      if (internals.renewalApplied > 0) renewed = lock as HeldLock;
    }, { ttl, autoRenew: false, waitTimeout: WAIT_MS })
    .catch((error: unknown) => world.trace(b, `grant-handover probe: ${key}'s waiter failed: ${(error as Error).message}`))
    .finally(() => (done = true));
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation || done) return;
  world.trace(a, `grant-handover probe: releases ${key} #${holder.fencingToken} to ${b.name}'s waiter (autoRenew: false, ttl ${ttl} ms)`);
  void holder.release().catch(() => undefined);
  await world.scheduler.run(world.scheduler.now + ttl, check, () => stop() || renewed !== undefined || done);
  if (world.violation || renewed === undefined || heldAt === undefined || !b.alive || b.paused) return;
  const entry = world.data.locks.get(renewed.lockKey);
  if (entry === undefined || entry.value !== renewed.token || entry.expiresAt <= heldAt + ttl) return;
  world.violate(b, 'a lock without a watchdog is renewed to no lease past its ttl', `${key} #${renewed.fencingToken} (autoRenew: false, ttl ${ttl} ms), its code started at ${heldAt} ms: after its first renewal the store holds it until ${entry.expiresAt} ms, ${entry.expiresAt - heldAt - ttl} ms past its ttl`);
}

/**
 * Holds `b`'s next attempt on `key` (its waiter's refresh) up `late` ms on its way, then has
 * `holder` (of `a`) release right after its answer: the grant comes `late` ms after that attempt
 * was sent. False when the refresh never went out (or a violation came first).
 */
async function releaseAfterLateRefresh(world: World, a: Instance, b: Instance, key: string, holder: Lock, late: number, check: () => void, stop: () => boolean): Promise<boolean> {
  const refresh = world.steerNext(b, 'acquire', lockRedisKeys(KEY_PREFIX, key).lock, { delay: 0, delayBefore: late });
  await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS + WAITER_REFRESH_MS, check, () => stop() || refresh.at !== undefined);
  if (world.violation || refresh.at === undefined) return false;
  await world.scheduler.run(refresh.at + late + HANDOVER_MS / 3, check, stop);
  if (world.violation) return false;
  world.trace(a, `grant-handover probe: releases ${key} #${holder.fencingToken}, ${b.name}'s refresh sent at ${refresh.at} ms answered ${late} ms late`);
  void holder.release().catch(() => undefined);
  return true;
}
