import { LockNotAcquiredError } from '../../lib/errors/lock-not-acquired.error.js';
import { isShutdownReason } from '../../lib/errors/shutdown-reason.js';
import type { Instance, World } from './world.js';

/** The key the probe's inner call waits for, held meanwhile by a call outside any chain. */
const KEY = 'iw';
/** The inner call's waitTimeout: far over shutdownTimeout, so only the close can end its wait in the runners' phase. */
const INNER_WAIT_MS = 60_000;
/** Virtual time given to the holder's acquire and to the inner call's first attempt. */
const SETTLE_MS = 50;

/** The probe's call waiting inside a term, and how it ended. */
interface InnerWait {
  readonly instance: Instance;
  readonly startedAt: number;
  endedAt?: number;
  outcome?: string;
  /** Why the ending breaks the promise (undefined: a shutdown's LockNotAcquiredError). */
  wrong?: string;
}

/**
 * docs/jobs-and-leaders.md ("Shutdown") and docs/configuration.md: a `using()` or `@Locked` call
 * still waiting for its lock inside a job run or a leader's term as `app.close()` begins is ended
 * in the runners' phase, rejecting with LockNotAcquiredError (the application is closing): else
 * the phase waits for the run all of its shutdownTimeout and gives the term's lease back under
 * work still going. The cron's inner call (`lw`, a 300 ms waitTimeout) ends by its own timeout
 * within that phase, so nothing judged it (seeded bug 86); here a leader's work waits, with a
 * waitTimeout far over shutdownTimeout, for a key a call outside any chain holds until its signal
 * aborts, and the final close begins while it waits. Draws nothing from the random streams.
 */
export class InnerWaitProbe {
  private readonly waits: InnerWait[] = [];

  constructor(private readonly world: World) {}

  async run(check: () => void, stop: () => boolean): Promise<void> {
    const world = this.world;
    const leader = world.instances.find((i) => i.alive && !i.paused && i.leader?.term !== undefined);
    if (leader === undefined) return;
    let held = false;
    // Holds the key until the close tells it (its signal aborts in the lock service's phase).
    void leader.service
      .using(KEY, (lock) => {
        held = true;
        return new Promise<void>((resolve) => (lock.signal.aborted ? resolve() : lock.signal.addEventListener('abort', () => resolve(), { once: true })));
      }, { waitTimeout: INNER_WAIT_MS })
      .catch((error: unknown) => world.trace(leader, `inner-wait probe: the holder's call failed: ${(error as Error).message}`));
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || held);
    if (world.violation || !held || !leader.alive || leader.leader?.term === undefined) return;
    void leader.leader.runAsLeader(async (term) => {
      const wait: InnerWait = { instance: leader, startedAt: world.scheduler.now };
      this.waits.push(wait);
      world.trace(leader, `inner-wait probe: term #${term.fencingToken}'s work waits for ${KEY} (waitTimeout ${INNER_WAIT_MS} ms)`);
      try {
        await leader.service.using(KEY, () => undefined, { waitTimeout: INNER_WAIT_MS });
        wait.outcome = `took ${KEY}`;
        wait.wrong = 'it took the lock';
      } catch (error) {
        wait.outcome = `${(error as Error).name}: ${(error as Error).message}`;
        if (!(error instanceof LockNotAcquiredError) || !isShutdownReason(error.cause)) wait.wrong = 'not the shutdown\'s LockNotAcquiredError';
      } finally {
        wait.endedAt = world.scheduler.now;
        world.trace(leader, `inner-wait probe: the inner call ends (${wait.outcome})`);
      }
    }).catch((error: unknown) => world.trace(leader, `inner-wait probe: runAsLeader() failed: ${(error as Error).message}`));
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, stop);
  }

  /** The runners' part of `instance`'s close, begun at `closeStartedAt`, is over: each wait begun before it ended, as shutdown ends it. */
  checkEnded(instance: Instance, closeStartedAt: number): void {
    for (const wait of this.waits) {
      if (wait.instance !== instance || wait.startedAt > closeStartedAt) continue;
      if (wait.endedAt !== undefined && wait.wrong === undefined) continue;
      const how = wait.endedAt === undefined ? 'still waiting' : `ended at ${wait.endedAt} ms (${wait.outcome}): ${wait.wrong}`;
      this.world.violate(instance, 'a call waiting for its lock inside a term as the close begins is ended by the runners\' shutdown (LockNotAcquiredError, the application is closing)',
        `${instance.name}'s inner call, waiting since ${wait.startedAt} ms, close begun at ${closeStartedAt} ms: ${how} when its runners stopped at ${this.world.scheduler.now} ms`);
      return;
    }
  }
}
