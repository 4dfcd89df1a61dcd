import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import type { Lock } from '../../lib/interfaces/lock.interface.js';
import { LeaderElectionRunner } from '../../lib/scheduling/leader-election.runner.js';
import { SETTLE_MS } from './settle-call.js';
import type { Instance, World } from './world.js';

/** The probe's election (a term nobody else runs) and the multi-key call's own keys. */
const TERM = 'ms-term';
const OWN = ['ms-b', 'ms-c'];
/** The term's lease; the call's lease and watchdog (an interval of its own). */
const TERM_TTL_MS = 3_000;
const TTL_MS = 600;
const RENEW_MS = 130;
/** The election's retry interval after the hand release (it leads again meanwhile, unjudged). */
const RETRY_MS = 200;
/** Virtual time given to the close of the probe's election. */
const STOP_MS = 5_000;

/** The held locks of `instance`'s engine. */
function heldLocks(instance: Instance): HeldLock[] {
  return [...(instance.service as unknown as { manager: { heldLocks: Set<HeldLock> } }).manager.heldLocks];
}

/**
 * docs/lock-family.md ("All or nothing") and docs/jobs-and-leaders.md: a multi-key lock one of
 * whose keys re-enters an outer lock of the call chain (a leader's term) shares that lock's
 * signal; when the outer lock steps down (its term released by hand while the call runs), the
 * multi-key lock's signal aborts `stepped-down`, which tells its code to stop while its keys stay
 * held. A later real loss of one of its own keys must still end the lock and give its other keys
 * back at once, as with no re-entry (01e73368: the step-down's signal made the lock stop watching
 * its parts, so the loss was told by that key alone and the others stayed locked, renewed, until
 * release()). Judged by the rule of `World.checkSiblingsGivenBack`, which the step-down's signal
 * no longer exempts. No plan's election re-enters its term from a multi-key call, and a hand
 * release of the plans' term is the world's own (its leader invariants), so the first live
 * instance runs an election of the probe's own: once it leads, its runAsLeader() work calls
 * using(['ms-term', 'ms-b', 'ms-c']), the term is released by hand, and `ms-b` is deleted from the
 * store (an operator's DEL, a failover that lost the write); its next renewal finds it gone. After
 * the faults; draws nothing from the random streams.
 */
export async function multiKeyStepDownProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const x = world.instances.find((i) => i.alive && !i.stopping && !i.paused);
  if (x === undefined) return;
  const runner = new LeaderElectionRunner(x.service, {}, TERM, 'MultiKeyStepDownProbe', TERM_TTL_MS, RETRY_MS);
  const seen: { lock?: Lock; ended?: true } = {};
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let forget: () => void = () => undefined;
  try {
    runner.start();
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || runner.term !== undefined);
    const term = runner.term;
    if (world.violation || term === undefined) return;
    void runner
      .runAsLeader(() =>
        x.service.using(
          [TERM, ...OWN],
          async (lock) => {
            seen.lock = lock;
            forget = world.multiKeyEntered(x, lock);
            await gate;
          },
          { ttl: TTL_MS, renewInterval: RENEW_MS },
        ),
      )
      .catch((error: unknown) => world.trace(x, `multi-key step-down probe: the call failed: ${(error as Error).message}`))
      .finally(() => (seen.ended = true));
    await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS, check, () => stop() || seen.lock !== undefined || seen.ended === true);
    const lock = seen.lock;
    // The shape did not form: the call did not get its keys (a reply late), or ended.
    if (world.violation || lock === undefined || seen.ended === true) return;
    world.trace(x, `multi-key step-down probe: releases ${TERM} #${term.fencingToken} by hand while using(${[TERM, ...OWN].join(', ')}) runs`);
    void term.release().catch(() => undefined);
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || lock.signal.aborted);
    const lost = heldLocks(x).find((part) => part.key === OWN[0] && part.held);
    if (world.violation || !lock.signal.aborted || lost === undefined || !x.alive || x.paused) return;
    world.data.locks.delete(lost.lockKey);
    world.trace(x, `multi-key step-down probe: ${OWN[0]} #${lost.fencingToken} deleted from the store, the lock's signal aborted (${(lock.signal.reason as Error).message})`);
    // Its next renewal finds it gone; the rule judges the other key WAKE_MS after that loss.
    await world.scheduler.run(world.scheduler.now + RENEW_MS + 4 * SETTLE_MS, check, () => stop() || !lost.held);
    if (world.violation) return;
    await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS, check, stop);
  } finally {
    open();
    forget();
    let stopped = false;
    void runner.stop(STOP_MS).finally(() => (stopped = true));
    if (!world.violation) await world.scheduler.run(world.scheduler.now + STOP_MS + SETTLE_MS, check, () => stop() || (stopped && (seen.ended === true || seen.lock === undefined)));
  }
}
