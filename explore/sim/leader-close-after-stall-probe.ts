import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import { LockLostError } from '../../lib/errors/lock-lost.error.js';
import { LeaderElectionRunner } from '../../lib/scheduling/leader-election.runner.js';
import { SETTLE_MS } from './settle-call.js';
import type { World } from './world.js';

/** The probe's election: nobody else runs it. */
const TERM = 'stall-close-term';
/** The term's lease (its watchdog ticks every ttl/3), and the election's retry interval. */
const TTL_MS = 600;
const RETRY_MS = 200;
/** How far past the term's local deadline the stall ends. */
const PAST_MS = 50;
/** Virtual time given to the runner's stop (its hooks and the lease's hand-back, within shutdownTimeout). */
const STOP_MS = 5_000;

/**
 * The election's half of 20379451 (the job's is `closeAfterStallProbe`'s): docs/jobs-and-leaders.md,
 * "Paused instances" and "Shutdown": a leader whose event loop was blocked past its term's lease
 * lost the term (`expired`) at that moment; an `app.close()` begun as the event loop comes back
 * from such a stall, before the deadline sweeper's timer has its turn, must tell the leader its
 * lease expired, not `shutdown` (LeaderElectionRunner.stop interrupted the term without asking
 * whether its lease was still live: the term's signal and onLeadershipLost said `shutdown`, the
 * lock held until the hooks end, on a lease another instance may hold by now, and the lapsed
 * term's lease was given back as this instance's). The plans' elections close with their
 * instances at the end, and a drawn `shutdown` fault of a paused instance runs once resumed,
 * behind the timers that fell due in the pause, so the shape never formed. The first live
 * instance runs an election of the probe's own; once it leads, it stalls until just past the
 * term's local deadline, and the runner's stop (what `app.close()` runs first) begins in the first
 * turn after the stall. Judged once the stop ended. The instance goes on running. After the
 * faults; draws nothing from the random streams.
 */
export async function leaderCloseAfterStallProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const x = world.instances.find((i) => i.alive && !i.stopping && !i.paused);
  if (x === undefined) return;
  const told: { lost?: unknown } = {};
  const runner = new LeaderElectionRunner(x.service, { onLeadershipLost: (lock) => void (told.lost = lock.signal.reason) }, TERM, 'LeaderCloseAfterStallProbe', TTL_MS, RETRY_MS);
  let stopping: Promise<void> | undefined;
  let stopped = false;
  try {
    runner.start();
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || runner.term !== undefined);
    const term = runner.term as HeldLock | undefined;
    // The shape did not form: the election did not lead (a reply late).
    if (world.violation || term === undefined || !x.alive || x.paused) return;
    const stall = term.deadline - x.clock.now() + PAST_MS;
    world.pause(x, stall, `leader close-after-stall probe: its event loop blocked past its ${TERM} term's lease (local deadline ${term.deadline} ms)`);
    // Scheduled after the pause's end: it runs first once the instance runs again, before the
    // timers that fell due in the pause (released behind it).
    world.scheduler.schedule(world.scheduler.now + stall, () => {
      world.trace(x, 'leader close-after-stall probe: the close\'s stop of the election begins as the event loop comes back');
      stopping ??= runner.stop(STOP_MS).finally(() => (stopped = true));
    }, x);
    await world.scheduler.run(world.scheduler.now + stall + STOP_MS, check, () => stop() || stopped);
    if (world.violation || x.crashed || !stopped) return;
    const reason: unknown = term.signal.reason;
    if (!term.signal.aborted || !(reason instanceof LockLostError) || reason.reason !== 'expired') {
      world.violate(x, 'a close begun as the event loop comes back from a stall past a leader\'s lease tells the leader its lease expired, not shutdown',
        `${TERM} #${term.fencingToken}: the term's signal ${term.signal.aborted ? `aborted: ${reason instanceof LockLostError ? `LockLostError (reason ${reason.reason})` : String(reason)}` : 'not aborted'} after a close begun ${PAST_MS} ms past its lease's local deadline (onLeadershipLost heard ${told.lost instanceof LockLostError ? told.lost.reason : String(told.lost)})`);
    }
  } finally {
    stopping ??= runner.stop(STOP_MS).finally(() => (stopped = true));
    if (!world.violation) await world.scheduler.run(world.scheduler.now + STOP_MS, check, () => stop() || stopped);
  }
}
