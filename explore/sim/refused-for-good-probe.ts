import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import { LockLostError } from '../../lib/errors/lock-lost.error.js';
import { LockNotAcquiredError } from '../../lib/errors/lock-not-acquired.error.js';
import { RedisLockError } from '../../lib/errors/redis-lock.error.js';
import { SETTLE_MS, settleCall } from './settle-call.js';
import type { Instance, World } from './world.js';

/** The acquire's waitTimeout: long, so that a call retried to it shows. */
const WAIT_MS = 5_000;
/** The held locks' ttl (a watchdog tick every 200 ms); the watchdog's own group (see part 3). */
const TTL_MS = 600;
const RENEW_MS = 150;
/** Part 4's ttl and watchdog: the grant lease is the whole 1 s, and no tick comes within it. */
const HANDOVER_TTL_MS = 3_000;
const HANDOVER_RENEW_MS = 2_000;

/**
 * Redis refusing a user in a way asking again cannot change (NOPERM: an ACL changed under the
 * running application; `World.acl`, which the network asks as each command reaches the store).
 * The simulated store had no way to refuse a script but the foreign-data probe's WRONGTYPE, so
 * nothing judged what the engine does with such a refusal (d2f5e3e, a358b42, e05f9cb, 13c11c8;
 * docs/guarantees.md, docs/locks.md). Each part on a key of its own, after the faults, on the live
 * instances; draws nothing from the random streams.
 *
 * 1. `nf`: every acquire script on the key is refused; a `using()` with a 5 s `waitTimeout` must
 *    end at the first refusal with a `RedisLockError` that is no `LockNotAcquiredError`, the store
 *    asked once (d2f5e3e: it was asked again until the `waitTimeout` ran out).
 * 2. `nl`: a held lock's key is refused as its `release()` goes out: the release rejects saying
 *    Redis refused it, not that it "was not answered" (e05f9cb).
 * 3. `nr`: a held lock's key is refused, its watchdog then ticks: the renewal's refusal loses the
 *    lock at once, reason `refused` (a358b42: renewed again at every tick, told `expired` as the
 *    lease ran out). Its watchdog ticks on an interval of its own, so no other lock's renewal
 *    shares its batch (a script refused is refused whole).
 * 4. `nh`: a lock handed over by another instance's release; the waiter's key is refused to it as
 *    its caller gets the lock, before the first renewal of the grant lease (a third of the way
 *    into it; the watchdog's first tick comes after that lease): that renewal's refusal loses the
 *    lock at once, reason `refused` (13c11c8: asked again until the grant lease ran out, told
 *    `expired`).
 */
export async function refusedForGoodProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const live = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  const [a, b] = live;
  if (a === undefined) return;
  try {
    await refusedAcquire(world, a, check, stop);
    if (world.violation) return;
    await refusedRelease(world, a, check, stop);
    if (world.violation) return;
    await refusedRenewal(world, a, aclRefusal('nr'), check, stop);
    if (world.violation || b === undefined) return;
    await refusedFirstRenewal(world, a, b, aclRefusal('nh'), check, stop);
  } finally {
    world.acl.clear();
  }
}

/**
 * How a probe's part has the store's commands refused for good, from `begin(instance)` (undefined:
 * to every instance) to `end()`: the key's name, what the trace says of its beginning, and the
 * invariant its renewal parts judge (`judgeLoss`).
 */
interface Refusal {
  key: string;
  /** What the trace says happens as the refusal begins, to instance `who`. */
  what(who: string): string;
  invariant: string;
  begin(world: World, instance?: Instance): void;
  end(world: World): void;
  /** What the loss's cause must say beside being a RedisLockError (the closed client named). */
  cause?: RegExp;
  /** Part 4's watchdog interval: a group of the instance's own, which no tick of another part's lock shares. */
  handoverRenewMs: number;
}

/** The ACL refuses `key` (NOPERM). */
function aclRefusal(key: string): Refusal {
  return {
    key,
    what: (who) => `the ACL refuses ${key} to ${who}`,
    invariant: 'a held lock whose renewal Redis refuses for good (NOPERM) is lost at that refusal, reason refused',
    begin: (world, who) => void world.acl.set(key, { who, refused: [] }),
    end: (world) => void world.acl.delete(key),
    handoverRenewMs: HANDOVER_RENEW_MS,
  };
}

/** The instance's client is closed by its owner (see `closedClientProbe`). */
function closedClient(key: string): Refusal {
  let closed: Instance | undefined;
  return {
    key,
    what: (who) => `the owner of ${who}'s client closes it`,
    invariant: 'a held lock whose renewal a client its owner closed refuses is lost at that refusal, reason refused, naming the closed client',
    begin: (world, who) => {
      closed = who;
      if (who !== undefined) world.closedClients.set(who, key);
    },
    end: (world) => {
      if (closed !== undefined) world.closedClients.delete(closed);
    },
    cause: /client was closed/,
    // Not the ACL part's: its group idles two ticks past its lock, and would tick within this grant lease.
    handoverRenewMs: HANDOVER_RENEW_MS + 100,
  };
}

/**
 * A client handed in that its owner closed while the application runs (ioredis' quit() or
 * disconnect(): `World.closedClients`, which refuses the part's key alone, so that the instance's
 * other locks are not lost with it) refuses the commands, and asking again changes nothing: parts 3 and 4 of `refusedForGoodProbe` with that refusal, on keys of their own
 * (`cr`, `ch`), the instance's client opened again once judged (79654fc: the watchdog renewed such
 * a lock again at every tick, and the first renewal of a grant lease was asked again until that
 * lease ran out, the holder told `expired` at the lease's end, with nothing naming the closed
 * client). After the faults; draws nothing from the random streams.
 */
export async function closedClientProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const live = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  const [a, b] = live;
  if (a === undefined) return;
  try {
    await refusedRenewal(world, a, closedClient('cr'), check, stop);
    if (world.violation || b === undefined) return;
    await refusedFirstRenewal(world, a, b, closedClient('ch'), check, stop);
  } finally {
    world.closedClients.clear();
  }
}

/** Part 1 (see above). */
async function refusedAcquire(world: World, instance: Instance, check: () => void, stop: () => boolean): Promise<void> {
  const key = 'nf';
  const rule = { refused: [] as string[] };
  world.acl.set(key, rule);
  world.trace(instance, `refused-for-good probe: the ACL refuses ${key} to everyone`);
  const call: { ran?: true; outcome?: unknown; settled?: true } = {};
  instance.service
    .using(key, () => void (call.ran = true), { waitTimeout: WAIT_MS })
    .then(
      () => (call.outcome = 'acquired'),
      (error: unknown) => (call.outcome = error),
    )
    .finally(() => (call.settled = true));
  await world.scheduler.run(world.scheduler.now + WAIT_MS + 2_000, check, () => stop() || call.settled === true);
  world.acl.delete(key);
  if (world.violation || !instance.alive || instance.paused) return;
  const { ran, outcome } = call;
  const attempts = rule.refused.filter((op) => op === 'acquire').length;
  if (ran === true || !(outcome instanceof RedisLockError) || outcome instanceof LockNotAcquiredError || attempts !== 1) {
    world.violate(instance, 'a call Redis refuses for good (NOPERM) ends at that refusal, with a RedisLockError', `${key}: the store refused ${attempts} attempt(s); the call ${call.settled === true ? `ended: ${describe(outcome)}` : 'had not settled'}`);
  }
}

/** Part 2 (see above). */
async function refusedRelease(world: World, instance: Instance, check: () => void, stop: () => boolean): Promise<void> {
  const key = 'nl';
  const lock = await settleCall(world, instance.service.acquire(key, { ttl: TTL_MS, renewInterval: RENEW_MS }), check, stop);
  if (lock === undefined || world.violation) return;
  world.acl.set(key, { refused: [] });
  world.trace(instance, `refused-for-good probe: the ACL refuses ${key} to everyone as ${instance.name} releases #${lock.fencingToken}`);
  const release: { outcome?: unknown; settled?: true } = {};
  lock.release().then(
    () => (release.outcome = 'released'),
    (error: unknown) => (release.outcome = error),
  ).finally(() => (release.settled = true));
  await world.scheduler.run(world.scheduler.now + TTL_MS + 2 * SETTLE_MS, check, () => stop() || release.settled === true);
  world.acl.delete(key);
  if (world.violation || !instance.alive || instance.paused) return;
  const { outcome } = release;
  if (!(outcome instanceof RedisLockError) || /not answered/.test(outcome.message) || !/refused/.test(outcome.message)) {
    world.violate(instance, 'a release Redis refuses for good (NOPERM) says it was refused', `${key} #${lock.fencingToken}: its release ${release.settled === true ? `ended: ${describe(outcome)}` : 'had not settled'}`);
  }
}

/** Part 3 (see above), refused by `refusal`. */
async function refusedRenewal(world: World, instance: Instance, refusal: Refusal, check: () => void, stop: () => boolean): Promise<void> {
  const key = refusal.key;
  const lock = await settleCall(world, instance.service.acquire(key, { ttl: TTL_MS, renewInterval: RENEW_MS }), check, stop);
  if (lock === undefined || world.violation) return;
  refusal.begin(world, instance);
  world.trace(instance, `refused-for-good probe: ${refusal.what(instance.name)} while it holds ${key} #${lock.fencingToken}`);
  await world.scheduler.run(world.scheduler.now + TTL_MS + 2 * SETTLE_MS, check, () => stop() || lock.signal.aborted);
  refusal.end(world);
  void lock.release().catch(() => undefined);
  if (world.violation || !instance.alive || instance.paused) return;
  judgeLoss(world, instance, refusal, lock, 'its watchdog renewal');
}

/** Part 4 (see above), refused by `refusal`. */
async function refusedFirstRenewal(world: World, a: Instance, b: Instance, refusal: Refusal, check: () => void, stop: () => boolean): Promise<void> {
  const key = refusal.key;
  const first = await settleCall(world, a.service.acquire(key, { ttl: HANDOVER_TTL_MS }), check, stop);
  if (first === undefined || world.violation) return;
  const waiter: { lock?: HeldLock; renewalsAtHandOut?: number; failed?: true } = {};
  b.service.acquire(key, { ttl: HANDOVER_TTL_MS, renewInterval: refusal.handoverRenewMs, waitTimeout: WAIT_MS }).then(
    (lock) => {
      // As the caller gets it: the ACL changes before anything else of its instance runs.
      refusal.begin(world, b);
      waiter.lock = lock as HeldLock;
      waiter.renewalsAtHandOut = (lock as unknown as { renewalsSent: number }).renewalsSent;
      world.trace(b, `refused-for-good probe: ${refusal.what(b.name)} as it gets ${key} #${lock.fencingToken}`);
    },
    () => (waiter.failed = true),
  );
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation || waiter.failed === true || waiter.lock !== undefined) return;
  world.trace(a, `refused-for-good probe: releases ${key} #${first.fencingToken} to ${b.name}'s waiter`);
  void first.release().catch(() => undefined);
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || waiter.lock !== undefined || waiter.failed === true);
  // Filled by the call meanwhile (a closure's writes narrow nothing).
  const lock = waiter.lock as HeldLock | undefined;
  // The shape did not form: the grant came some other way, or renewed before its caller got it.
  if (world.violation || lock === undefined || waiter.renewalsAtHandOut !== 0) {
    refusal.end(world);
    if (lock !== undefined) void lock.release().catch(() => undefined);
    return;
  }
  await world.scheduler.run(world.scheduler.now + HANDOVER_TTL_MS, check, () => stop() || lock.signal.aborted);
  refusal.end(world);
  void lock.release().catch(() => undefined);
  if (world.violation || !b.alive || b.paused) return;
  judgeLoss(world, b, refusal, lock, 'the first renewal of its grant lease');
}

/** A held lock whose renewal Redis refused for good is lost at that refusal, reason `refused` (its cause saying what `refusal` asks). */
function judgeLoss(world: World, instance: Instance, refusal: Refusal, lock: { fencingToken?: number; signal: AbortSignal }, what: string): void {
  const reason: unknown = lock.signal.reason;
  const cause: unknown = reason instanceof LockLostError ? reason.cause : undefined;
  if (!lock.signal.aborted || !(reason instanceof LockLostError) || reason.reason !== 'refused' || !(cause instanceof RedisLockError) || (refusal.cause !== undefined && !refusal.cause.test(cause.message))) {
    world.violate(instance, refusal.invariant, `${refusal.key} #${lock.fencingToken}: ${what} refused; its signal ${lock.signal.aborted ? `aborted: ${describe(reason)}${reason instanceof LockLostError ? ` (reason ${reason.reason})` : ''}` : 'not aborted'}`);
  }
}

function describe(outcome: unknown): string {
  if (outcome === undefined) return 'nothing';
  return outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : String(outcome);
}
