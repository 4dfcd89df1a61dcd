import type { RenewalRequest } from '../../lib/core/stores/lock-store.js';
import { SEMAPHORE_SUFFIXES } from '../../lib/core/semaphore/semaphore-keys.js';
import { liveValue } from '../../lib/core/stores/memory/memory-data.js';
import type { Lock } from '../../lib/interfaces/lock.interface.js';
import { settleCall, SETTLE_MS } from './settle-call.js';
import type { World } from './world.js';

/** The probe's semaphore: nobody else calls it. */
const KEY = 'sg';
const LIMIT = 1;
/** The holder's ttl and watchdog (an interval of its own), the waiter's ttl and wait. */
const TTL_MS = 600;
const RENEW_MS = 170;
const WAITER_TTL_MS = 3_000;
const WAIT_MS = 60_000;

/** What the store did with the holder's renewal that found its permit gone. */
interface Judged {
  /** The holder's entry was in the holders hash, and these waiters queued, as the renewal ran. */
  entry: boolean;
  queued: string[];
  /** Holders the renewal added (grants to the queue), and the permits left free after it. */
  granted: string[];
  free: number;
}

/** The probe running in each world: the holder's token, and what it is told (see `watchPermitGoneRenewals`). */
const judges = new WeakMap<World, { token: string; judge: (judged: Judged) => void }>();

/**
 * Wraps the store's renewals: while `renewalHandOnProbe` runs, the renewal of its holder's permit
 * finds that permit evicted (deleted as the command reaches the store, nothing else running
 * between), and what the store did is read around it: the holder's entry and the queue before,
 * the holders it added after. Installed as the world is made; the network calls the store's
 * methods as each command reaches it.
 */
export function watchPermitGoneRenewals(world: World): void {
  const store = world.store;
  const renew = store.renew.bind(store);
  const renewBatch = store.renewBatch.bind(store);
  // The probe's renewal: its permit evicted now, the store read now and once the renewal ran
  // (after the store's pending work settled), as the reply goes; undefined for any other.
  const arm = (requests: readonly { lockKey: string; token: string }[]): (() => void) | undefined => {
    const probe = judges.get(world);
    const request = probe === undefined ? undefined : requests.find((r) => r.token === probe.token && r.lockKey.includes(`{${KEY}}${SEMAPHORE_SUFFIXES.permit}`));
    if (probe === undefined || request === undefined) return undefined;
    judges.delete(world);
    const base = request.lockKey.slice(0, request.lockKey.indexOf(SEMAPHORE_SUFFIXES.permit));
    const holders = base + SEMAPHORE_SUFFIXES.holders;
    world.data.locks.delete(request.lockKey);
    world.trace(undefined, `renewal hand-on probe: ${KEY}'s permit ${world.tokenName(probe.token)} evicted as its renewal reaches the store`);
    // Copied: the store changes the hash in place.
    const before = new Set((liveValue(world.data.semaphoreHolders, holders, world.scheduler.now) ?? new Map<string, string>()).keys());
    const entry = before.has(probe.token);
    const queued = [...(liveValue(world.data.waiting, base + SEMAPHORE_SUFFIXES.queue, world.scheduler.now)?.order ?? [])];
    return () => {
      const after = liveValue(world.data.semaphoreHolders, holders, world.scheduler.now) ?? new Map<string, string>();
      let used = 0;
      for (const value of after.values()) used += Number(value.split(':')[0]);
      probe.judge({ entry, queued, granted: [...after.keys()].filter((holder) => !before.has(holder)), free: LIMIT - used });
    };
  };
  // Any other renewal runs as the store's own, without a step more.
  store.renew = (...args: Parameters<typeof renew>) => {
    const after = arm([{ lockKey: args[0], token: args[1] }]);
    const reply = renew(...args);
    return after === undefined ? reply : reply.then((outcome) => (after(), outcome));
  };
  store.renewBatch = (requests: RenewalRequest[]) => {
    const after = arm(requests);
    const parts = renewBatch(requests);
    return after === undefined ? parts : parts.map((part) => ({ ...part, outcomes: part.outcomes.then((outcomes) => (after(), outcomes)) }));
  };
}

/**
 * A semaphore holder's renewal that finds its permit key gone (evicted, deleted: the holder is
 * told it lost the lock) drops its entry and hands the permits so freed to the waiters queued
 * for them, as a release does (680c2b46: it dropped the entry and lowered the count, handing them
 * to nobody, and the waiters slept until their next poll or another semaphore call). The drawn
 * faults never made the shape: a permit key gone while its holder still runs (the store restart
 * takes the holders hash and the queue with it), a waiter queued behind it, and the holder's
 * renewal in the store before the waiter's next poll (which would take the permit itself). On a
 * semaphore of 1, the first live instance X holds the permit, the second, Y, queues a waiter; the
 * permit is evicted as X's next watchdog renewal reaches the store, which must hand it to Y's
 * waiter. Judged as the store runs that renewal. After the faults; draws nothing from the random
 * streams.
 */
export async function renewalHandOnProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const [x, y] = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  if (x === undefined || y === undefined) return;
  let held: Lock | undefined;
  let judged: Judged | undefined;
  const waiter: { lock?: Lock; failed?: true } = {};
  try {
    held = await settleCall(world, x.service.acquire(KEY, { limit: LIMIT, ttl: TTL_MS, renewInterval: RENEW_MS }), check, stop);
    if (held === undefined || world.violation) return;
    y.service.acquire(KEY, { limit: LIMIT, ttl: WAITER_TTL_MS, waitTimeout: WAIT_MS }).then(
      (lock) => {
        waiter.lock = lock;
        world.trace(y, `renewal hand-on probe: the waiter holds ${KEY} #${lock.fencingToken}`);
        void lock.release().catch(() => undefined);
      },
      () => (waiter.failed = true),
    );
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
    // The shape did not form: the waiter got in, or failed, or the holder lost its permit already.
    if (world.violation || waiter.lock !== undefined || waiter.failed === true || !held.held) return;
    const token = (held as unknown as { token: string }).token;
    judges.set(world, { token, judge: (found) => (judged = found) });
    const lock = held;
    await world.scheduler.run(world.scheduler.now + TTL_MS, check, () => stop() || judged !== undefined || !lock.held);
    if (world.violation || judged === undefined) return;
    world.trace(x, `renewal hand-on probe: the store ran the renewal with ${JSON.stringify(judged)}`);
    // The shape formed: the renewal found the permit gone with the entry there and a waiter queued.
    if (judged.entry && judged.queued.length > 0 && judged.granted.length === 0 && judged.free > 0) {
      world.violate(x, 'a semaphore renewal that finds its permit gone hands the permits it freed to the waiters queued for them',
        `${KEY}: the renewal of ${world.tokenName(token)}, its permit gone, left ${judged.free} permit(s) free with ${judged.queued.join(', ')} queued, granting nobody`);
      return;
    }
    await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS, check, () => stop() || waiter.lock !== undefined || waiter.failed === true);
  } finally {
    judges.delete(world);
    if (held !== undefined) void held.release().catch(() => undefined);
  }
}
