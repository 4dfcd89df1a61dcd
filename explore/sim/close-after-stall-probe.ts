import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import { WithoutOverlapping } from '../../lib/decorators/without-overlapping.decorator.js';
import { LockLostError } from '../../lib/errors/lock-lost.error.js';
import type { LockService } from '../../lib/lock.service.js';
import type { JobLockOrchestrator } from '../../lib/scheduling/job-lock.orchestrator.js';
import { JOB_ORCHESTRATOR_PROPERTY } from '../../lib/scheduling/scheduling.constants.js';
import { SETTLE_MS } from './settle-call.js';
import type { Instance, World } from './world.js';

/** The probe's job key: nobody else runs it. */
const KEY = 'stall-close-job';
/** The run lock's lease (its watchdog ticks every ttl/3). */
const TTL_MS = 600;
/** How far past the run lock's local deadline the stall ends. */
const PAST_MS = 50;
/** Virtual time given to the close: its runners' part and the service's, within shutdownTimeout. */
const CLOSE_MS = 5_000;

/** What the job's run saw: its lock's signal. */
interface Seen {
  signal?: AbortSignal;
}

/** A job method as `@nestjs/schedule` would call it, running until its lock's signal aborts (the pattern of docs/jobs-and-leaders.md). */
class StallCloseJob {
  constructor(
    orchestrator: JobLockOrchestrator,
    private readonly service: LockService,
    private readonly seen: Seen,
  ) {
    (this as unknown as Record<symbol, unknown>)[JOB_ORCHESTRATOR_PROPERTY] = orchestrator;
  }

  @WithoutOverlapping({ key: KEY, ttl: TTL_MS })
  async run(): Promise<void> {
    const { signal } = this.service.current(KEY)!;
    this.seen.signal = signal;
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  }
}

/**
 * docs/jobs-and-leaders.md, "Paused instances" and "Shutdown": after the event loop was blocked
 * past a lease, the lock is reported lost (`expired`) at that moment; a running job is told
 * `shutdown` only while its lock stays held and renewed. An `app.close()` begun as the event loop
 * comes back from such a stall (a SIGTERM handled first, a close called by the code that
 * blocked), before the deadline sweeper's timer has its turn, must tell the running job that its
 * lease expired (20379451: the job runner's stop interrupted the lock without asking whether its
 * lease was still live, and the run heard `shutdown` on a lease another instance may hold). The
 * drawn `shutdown` fault of a paused instance runs once resumed, after the timers that fell due
 * in the pause (the sweeper's among them), so it never made the shape. An instance X of the
 * probe's own (see `World.probeInstance`: the plan's stay for the final close) runs a
 * `@WithoutOverlapping` job that waits for its signal, stalls until just past the run lock's local
 * deadline, and its close begins in the first turn after the stall. Judged once the close ended.
 * After the faults; draws nothing from the random streams.
 */
export async function closeAfterStallProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const x = world.probeInstance('close-after-stall');
  const seen: Seen = {};
  const job = new StallCloseJob(x.jobs, x.service, seen);
  void job.run().catch((error: unknown) => world.trace(x, `close-after-stall probe: the job failed: ${(error as Error).message}`));
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || seen.signal !== undefined);
  const lock = runLock(x);
  // The shape did not form: the run did not start (the key busy, a reply late), or its lock already ended.
  if (world.violation || seen.signal === undefined || seen.signal.aborted || lock === undefined) return;
  const signal = seen.signal;
  const stall = lock.deadline - x.clock.now() + PAST_MS;
  world.pause(x, stall, `close-after-stall probe: its event loop blocked past its ${KEY} lease (local deadline ${lock.deadline} ms)`);
  // Scheduled after the pause's end: it runs first once the instance runs again, before the
  // timers that fell due in the pause (released behind it).
  world.scheduler.schedule(world.scheduler.now + stall, () => {
    world.trace(x, 'close-after-stall probe: app.close() begins as the event loop comes back');
    void x.shutdown();
  }, x);
  await world.scheduler.run(world.scheduler.now + stall + CLOSE_MS, check, () => stop() || x.closed);
  if (world.violation || x.crashed) return;
  const reason: unknown = signal.reason;
  if (!signal.aborted || !(reason instanceof LockLostError) || reason.reason !== 'expired') {
    world.violate(x, 'a close begun as the event loop comes back from a stall past a running job\'s lease tells the run its lease expired, not shutdown',
      `${KEY}: the run's signal ${signal.aborted ? `aborted: ${reason instanceof LockLostError ? `LockLostError (reason ${reason.reason})` : String(reason)}` : 'not aborted'} after a close begun ${PAST_MS} ms past its lease's local deadline`);
  }
}

/** The job's run lock `instance` holds, if any. */
function runLock(instance: Instance): HeldLock | undefined {
  return [...(instance.service as unknown as { manager: { heldLocks: Set<HeldLock> } }).manager.heldLocks].find((lock) => lock.key === KEY && lock.held);
}
