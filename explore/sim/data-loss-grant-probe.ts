import { WAITER_LEASE_MS, WAITER_REFRESH_MS } from '../../lib/core/engine/waiter-timing.js';
import { SETTLE_MS, settleCall } from './settle-call.js';
import type { Instance, World } from './world.js';

/** The probe's key: nobody else calls it. */
const KEY = 'dl';
/** Every call's waitTimeout: longer than the probe, so none gives up. */
const WAIT_MS = 60_000;
/** Fencing tokens the restart's snapshot lacks: the grant's and the one before it. */
const ROLLED_BACK = 2;

/**
 * A grant made before the store lost its data (the defect of
 * real-Redis explorer seed 491271, `test/chaos/stale-grant-after-data-loss.spec.ts`): holder A
 * releases a key to waiter B, whose process is paused with the grant's message unread; the store
 * restarts from a snapshot older than the grant (its queue gone, the key's counter two tokens
 * back) and A takes the key again, with a token below the grant's. B resumes after its grant's
 * lease: its overdue refresh goes out first, the grant's message comes in while that attempt is
 * in flight, and the busy reply's counter stands below the grant's token. The reply says B was
 * queued anew (its place was lost): B must confirm the grant with an attempt, not run its code
 * beside A. Faults drawn at random (a pause, a snapshot restart and a release between them) made
 * this shape rarely: seeded bug 47, found after 22 schedules once, went unfound in 130 as the
 * runs of seed 1 changed. Runs last of the probes, on plans without leaders, jobs or greedy
 * callers (nothing else holds a lock or a term the restart would take away), so every run is
 * what it was until then; draws nothing from the random streams.
 */
export async function dataLossGrantProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const live = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  if (live.length < 2) return;
  const [a, b] = live as [Instance, Instance];
  const holder = await settle(world, a, a.service.acquire(KEY, { waitTimeout: WAIT_MS }), check, stop);
  if (holder === undefined) return;
  let waiterDone = false;
  void b.service
    .using(KEY, (lock) => world.section(b, 'mutex', KEY, lock, [20, 20], false), { waitTimeout: WAIT_MS })
    .catch((error: unknown) => world.trace(b, `data-loss probe: the waiter's call failed: ${(error as Error).message}`))
    .finally(() => (waiterDone = true));
  // Queued, its first attempt answered; then paused past its next refresh, which falls due unrun.
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  if (world.violation || waiterDone || !b.alive) return;
  const refreshDue = WAITER_REFRESH_MS + 1;
  world.pause(b, refreshDue + 3 * SETTLE_MS + WAITER_LEASE_MS, 'data-loss probe: paused while it waits');
  await world.scheduler.run(world.scheduler.now + refreshDue, check, stop);
  if (world.violation) return;
  // The release hands the key to B, whose process reads the message only once resumed.
  world.trace(a, `data-loss probe: releases ${KEY} #${holder.fencingToken} to the paused waiter`);
  await settle(world, a, holder.release().then(() => true), check, stop);
  if (world.violation) return;
  world.restartStore(ROLLED_BACK);
  const again = await settle(world, a, a.service.acquire(KEY, { waitTimeout: WAIT_MS }), check, stop);
  if (again === undefined) return;
  world.trace(a, `data-loss probe: holds ${KEY} again (#${again.fencingToken}) while the waiter is paused`);
  // B resumes: it must wait for A's release, and only then run.
  await world.scheduler.run(world.scheduler.now + WAITER_LEASE_MS + 2 * SETTLE_MS + WAITER_REFRESH_MS, check, () => stop() || waiterDone);
  if (world.violation) return;
  await settle(world, a, again.release().then(() => true), check, stop);
  await world.scheduler.run(world.scheduler.now + WAITER_REFRESH_MS + 2 * SETTLE_MS, check, () => stop() || waiterDone);
}

/** `settleCall`, a failure traced as the probe's. */
function settle<T>(world: World, instance: Instance, call: Promise<T>, check: () => void, stop: () => boolean): Promise<T | undefined> {
  return settleCall(world, call, check, stop, (error) => world.trace(instance, `data-loss probe: ${(error as Error).message}`));
}
