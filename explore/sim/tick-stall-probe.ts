import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import type { Instance, World } from './world.js';

/** The probe's tick: no cron slot (they end at the faults' horizon), nor the job-claim probe's. */
const TICK = 2_000_000;
/** Virtual time given to a claim and the run of a tick (its work is 80 ms at most). */
const RUN_MS = 200;
/** Past a lease's end in the store, before the stalled instance runs again. */
const MARGIN_MS = 50;

/** The `@OnOneInstance` owner lease `instance` holds, if any. */
function ownerLease(instance: Instance): HeldLock | undefined {
  return [...(instance.service as unknown as { manager: { heldLocks: Set<HeldLock> } }).manager.heldLocks].find((lock) => lock.key === 'tick-job:owner' && lock.held);
}

/**
 * A tick that falls due while an instance's event loop is blocked, run meanwhile by the owner,
 * which then stops too (the shape f875c0c fixed, as
 * `test/jobs/non-owner-blocked-at-tick-runs-the-tick-a-dead-owner-ran.spec.ts` plays it): B, no
 * owner, is paused; owner A runs the tick and is paused past its lease; once that lease has run
 * out in the store, B resumes and its cron calls the tick it missed. B's claim takes the lease
 * over at once, but counts from B's stall's start (the job runner's stall watch): it is late,
 * and B skips the tick A ran ("each scheduled tick of an @OnOneInstance job runs at most once";
 * the probe's tick is judged as a cron slot's, without the exception of a late one, which is
 * for an instance that owned the lease). The drawn faults made this shape rarely: a stall of a
 * non-owner across a tick, then the owner's loss, then its end. Draws nothing from the random
 * streams. Needs two live instances whose cron ran (the watch starts with the job's first call).
 */
export async function tickStallProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const live = world.instances.filter((i) => i.alive && !i.stopping && !i.paused && i.simJobs !== undefined && i.firstTickAt !== undefined);
  if (live.length < 2) return;
  const ttl = world.plan.ttl;
  let a = live.find((i) => ownerLease(i) !== undefined);
  if (a === undefined) {
    const first = live[0]!;
    void first.simJobs!.tick(TICK - 1, false).catch(() => undefined);
    await world.scheduler.run(world.scheduler.now + ttl, check, () => stop() || ownerLease(first) !== undefined);
    if (world.violation || ownerLease(first) === undefined) return;
    a = first;
  }
  const owner = a;
  const b = live.find((i) => i !== owner)!;
  // B stalls until A's lease has run out in the store (renewed at most a ttl before A stalls).
  world.pause(b, 2 * RUN_MS + ttl + MARGIN_MS, 'tick-stall probe: its event loop blocked as a tick falls due');
  await world.scheduler.run(world.scheduler.now + RUN_MS, check, stop);
  if (world.violation || !owner.alive || owner.paused) return;
  world.trace(owner, `tick-stall probe: ${owner.name} fires tick ${TICK}`);
  void owner.simJobs!.tick(TICK, false).catch(() => undefined);
  await world.scheduler.run(world.scheduler.now + RUN_MS, check, stop);
  if (world.violation || !owner.alive) return;
  // A stops past its lease (as one that died would), until after B's claim.
  world.pause(owner, 2 * ttl + RUN_MS, 'tick-stall probe: the owner stops after running the tick');
  await world.scheduler.run(world.scheduler.now + ttl + MARGIN_MS, check, () => stop() || !b.paused);
  if (world.violation || !b.alive || b.paused) return;
  // As B's event loop runs again, its cron calls the tick it missed.
  world.trace(b, `tick-stall probe: ${b.name} resumed, fires tick ${TICK}`);
  void b.simJobs!.tick(TICK, false).catch(() => undefined);
  await world.scheduler.run(world.scheduler.now + 2 * ttl + RUN_MS, check, () => stop() || !owner.paused);
}
