import { HeldLock } from '../core/engine/held-lock.js';
import { leaseLive } from '../core/engine/lease-deadline.js';
import { refuseGenerator } from '../core/engine/generator-result.js';
import type { ClockTimer } from '../core/time/clock.js';
import type { LockRunner } from '../core/engine/locked-call.js';
import { settleWithin, TIMED_OUT } from '../core/time/settle-within.js';
import type { Lock } from '../interfaces/lock.interface.js';
import type { OnLeadershipAcquired, OnLeadershipLost } from '../interfaces/scheduling.interface.js';
import type { LockService } from '../lock.service.js';
import { LOCK_RUNNER } from '../redis-lock.constants.js';
import { quoteKey } from '../core/keys/quote-key.js';
import { boundName } from './job-spec.js';
import { thrownStack, thrownText } from '../core/engine/thrown-text.js';

type Candidate = Partial<OnLeadershipAcquired & OnLeadershipLost>;

/**
 * One `@LeaderElection` on this instance: tries to take the lease every `retryMs` while it
 * does not lead, lets the watchdog renew it while it does, and runs the class's hooks one at
 * a time, in order (a loss never overtakes the gain it ends).
 */
export class LeaderElectionRunner {
  private lock?: Lock;
  private timer?: ClockTimer;
  private hooks: Promise<void> = Promise.resolve();
  private stopped = false;
  /** Terms whose `onLeadershipAcquired` started: only those hear `onLeadershipLost`. */
  private readonly announced = new WeakSet<Lock>();
  /** Work `runAsLeader()` runs (settled either way): a term ends only after its work has. */
  private readonly works = new Map<Lock, Set<Promise<void>>>();

  constructor(
    private readonly locks: LockService,
    private readonly candidate: Candidate,
    readonly key: string,
    readonly where: string,
    private readonly ttl: number | undefined,
    private readonly retryMs: number,
  ) {}

  private get runner(): LockRunner {
    return this.locks[LOCK_RUNNER];
  }

  /**
   * The current term's lock, while this instance leads: held, and its local lease deadline not
   * passed (a term whose deadline passed during a stall is reported lost here and now).
   */
  get term(): Lock | undefined {
    const lock = this.lock;
    return lock !== undefined && leaseLive(lock, this.runner.clock) ? lock : undefined;
  }

  start(): void {
    this.tryToLead();
  }

  /**
   * Runs `work` in the current term (as its hooks run: `current()` is the term, and `using()` and
   * `@Locked` calls inside are told when the term ends), and keeps the lease until it ends at a
   * step-down or shutdown. `undefined`, without running it, when this instance does not lead.
   */
  runAsLeader<T>(work: (term: Lock) => T | PromiseLike<T>): Promise<Awaited<T> | undefined> {
    const term = this.stopped ? undefined : this.term;
    if (term === undefined) return Promise.resolve(undefined);
    let running: Promise<Awaited<T>>;
    try {
      // Work that is a generator or an Observable would run after it "ended", unseen by the term.
      const where = `runAsLeader(${quoteKey(this.key)}, work)`;
      running = Promise.resolve(this.runner.runInChain(term, () => work(term))).then((result) => refuseGenerator(result, where, 'work', 'outside the term (whose lease is given back without waiting for it)'));
    } catch (error) {
      running = Promise.reject(error as Error);
    }
    const works = this.works.get(term) ?? new Set<Promise<void>>();
    this.works.set(term, works);
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    works.add(settled);
    void settled.then(() => {
      works.delete(settled);
      if (works.size === 0 && this.works.get(term) === works) this.works.delete(term);
    });
    return running;
  }

  /** When the work `runAsLeader()` runs in `term` has ended (now, when there is none). */
  private worksOf(term: Lock): Promise<void> {
    const works = this.works.get(term);
    return works === undefined ? Promise.resolve() : Promise.all(works).then(() => undefined);
  }

  /**
   * When the work `runAsLeader()` runs on this instance has ended, of every term: an earlier
   * term's too, lost while its work winds down, behind which this instance leads again. A lease
   * given back before that work ends would let another instance lead beside it.
   */
  private allWorks(): Promise<void> {
    const works = [...this.works.values()].flatMap((term) => [...term]);
    return works.length === 0 ? Promise.resolve() : Promise.all(works).then(() => undefined);
  }

  /**
   * Stops trying. A leader steps down: its lock's signal aborts (a `shutdown` `LockLostError`),
   * its hooks finish (at most `timeoutMs`), `onLeadershipLost` runs, then the lease is released.
   */
  async stop(timeoutMs: number): Promise<void> {
    // One timeoutMs for the hooks and the lease's release together.
    const deadline = performance.now() + timeoutMs;
    // A term whose local deadline passed (a stall the close began as the event loop came back
    // from, before the deadline sweeper's turn) is lost, not stepped down from: reported
    // `expired` here, it ends as any loss does (see lost(), whose wait is cut below), and its
    // lease, which another instance may hold by now, is not given back as this one's.
    if (this.lock !== undefined) leaseLive(this.lock, this.runner.clock);
    // What waits on cutAtStop is cut below; a wait begun on it from now on ends at once.
    this.cut.add(this.cutAtStop);
    this.stopped = true;
    this.timer?.cancel();
    // A term that ended before shutdown and is still waiting for its hooks: the class is told now.
    for (const wait of this.cutAtStop) wait.abort();
    // An attempt in flight is not awaited (Redis may be unreachable): if it wins, take()
    // sees that the election stopped and gives the lease straight back.
    const lock = this.lock;
    if (lock !== undefined) {
      this.lock = undefined;
      this.runner.logger.debug?.(`${this.where} steps down from ${quoteKey(this.key)}: the application is shutting down.`);
      // First tell the leader (an onLeadershipAcquired may be waiting for this very signal),
      // while the lease stays held: no other instance leads before this one has stopped.
      if (lock instanceof HeldLock) {
        lock.interrupt();
        // A term released by hand whose release is still on its way: interrupt() leaves a lock
        // being released alone, and the release may not come back before the close ends.
        if (!lock.signal.aborted) lock.endTerm();
      }
      // And the using() and @Locked calls its hooks wait for, which stop on their own locks' signals.
      this.runner.interruptCallsWithin?.([lock]);
      // Work runAsLeader() runs in the term ends too before onLeadershipLost and the release.
      const works = this.worksOf(lock);
      this.hooks = this.hooks.then(() => works).then(() => this.callLost(lock));
    }
    // And the work of earlier terms, lost and still winding down: this term's lease goes after
    // all of it (and the close too, as for a job's run).
    const ended = Promise.all([this.hooks, this.allWorks()]);
    const overran = (await settleWithin(ended, Math.max(0, deadline - performance.now()))) === TIMED_OUT;
    // What is still bounded by a ttl (an onLeadershipLost that did not return) has had its
    // shutdownTimeout: its wait ends, and with it its timer (and so does any such wait begun from
    // now on: a step-down cut here goes on to wait for the work before its release).
    this.cut.add(this.cutAfterStop);
    for (const wait of this.cutAfterStop) wait.abort();
    const releasing = this.releasing;
    if (overran && releasing !== undefined) {
      // Every hook returned: the wait was for Redis, on the release after a step-down, which the
      // hooks' turn waits for. Said once (releaseLease() would say it again as the shutdown ends it).
      this.saidUnanswered.add(releasing);
      this.runner.logger.warn(`${this.where} could not release the leadership ${quoteKey(this.key)} it stepped down from (no answer from Redis within shutdownTimeout, ${timeoutMs} ms); it expires on its own.`);
    } else if (overran) {
      this.runner.logger.warn(
        `The hooks of ${this.where}${this.works.size > 0 ? ' (or work runAsLeader() runs)' : ''} were still running ${timeoutMs} ms (shutdownTimeout) after its leadership's signal aborted for shutdown` +
          (lock === undefined ? '.' : '; the lease is given back while they run.'),
      );
      // Told now rather than never, behind a hook that may not return (once, see callLost); so is
      // a term stepped down before the close whose runAsLeader() work still runs, whose
      // onLeadershipLost waits for that work (this.lock no longer names it).
      if (lock !== undefined) void this.callLost(lock);
      for (const term of this.works.keys()) void this.callLost(term);
    }
    if (lock === undefined) return;
    // Its failure is said once, here, as the jobs' hand-back does: one that comes after the wait
    // (LockService's shutdown ending it) would only repeat it, and nothing sends it again then.
    const released = lock.release().then(
      () => undefined,
      (error: unknown) => (error as Error).message,
    );
    // The hooks used all of shutdownTimeout (said above): Redis was not waited for. The release
    // goes on, and LockService's own shutdown waits for it; if that ends it unanswered, the lease
    // stays in Redis until its ttl, which is said then.
    if (overran || deadline - performance.now() <= 0) {
      void released.then((failure) => {
        if (failure !== undefined) this.runner.logger.warn(`${this.where} could not release the leadership ${quoteKey(this.key)} (${failure}); it expires on its own.`);
      });
      this.runner.logger.debug?.(`${this.where} releases the leadership ${quoteKey(this.key)} after shutdownTimeout was spent on its hooks.`);
      return;
    }
    // Redis may not answer (cut off, frozen): the lease expires on its own, and waiting longer
    // would keep the application from ever closing.
    const failure = await settleWithin(released, deadline - performance.now());
    if (failure === undefined) return;
    const why = failure === TIMED_OUT ? `no answer from Redis within shutdownTimeout, ${timeoutMs} ms` : failure;
    // A release Redis refused is sent again at LockService's shutdown (see UnconfirmedReleases), not after it.
    const then = failure === TIMED_OUT ? 'it expires on its own' : 'it is sent again while the shutdown lasts, or expires on its own';
    this.runner.logger.warn(`${this.where} could not release the leadership ${quoteKey(this.key)} (${why}); ${then}.`);
  }

  private tryToLead(): void {
    this.timer = undefined;
    if (this.stopped) return;
    void this.take();
  }

  private retryLater(): void {
    if (this.stopped || this.lock !== undefined) return;
    this.timer?.cancel();
    // On the engine's clock, so that a test's manual clock moves elections too. Outside any call
    // chain: a loss heard inside the term's own chain (its hook's extend() refused) would
    // otherwise have every later try re-enter the lost lease.
    const arm = (): ClockTimer => this.runner.clock.setTimer(() => this.tryToLead(), this.retryMs);
    this.timer = this.runner.outsideChain?.(arm) ?? arm();
  }

  private async take(): Promise<void> {
    let lock: Lock | null;
    try {
      // Never re-entering a lease some call chain holds (or held, and lost), as jobs' locks.
      const attempt = (): Promise<Lock | null> =>
        this.locks.tryAcquire(this.key, {
          ...(this.ttl === undefined ? {} : { ttl: this.ttl }),
          name: boundName(this.key),
          label: `${this.where} (@LeaderElection)`,
          // A term lasts as long as the leader is up, whatever the module's autoRenew says of the
          // application's own locks.
          autoRenew: true,
        });
      lock = await (this.runner.outsideChain?.(attempt) ?? attempt());
    } catch (error) {
      // At shutdown an attempt in flight is cut short: that is no news.
      if (this.stopped) return;
      this.runner.logger.warn(`${this.where} could not try for the leadership ${quoteKey(this.key)} (${(error as Error).message}); retrying.`);
      this.retryLater();
      return;
    }
    if (lock === null) {
      this.retryLater();
      return;
    }
    if (this.stopped) {
      await lock.release().catch(() => undefined);
      return;
    }
    const leader = lock;
    this.lock = leader;
    this.runner.logger.debug?.(`${this.where} leads ${quoteKey(this.key)} (fencing token ${leader.fencingToken}).`);
    leader.signal.addEventListener('abort', () => this.lost(leader), { once: true });
    // Released by hand (LeadershipService.leaderLock(key).release(), or the lock the hook got):
    // the term ends as with a loss, and the election goes on.
    // Its signal aborts as at every other end of a term, which tells the hooks (and so `lost`).
    // Also once stop() took the term while the release was on its way: interrupt() leaves a lock
    // being released alone, and the term's signal would never abort.
    if (leader instanceof HeldLock) leader.whenReleased(() => (this.lock === leader || this.stopped) && leader.endTerm());
    this.hooks = this.hooks.then(() => this.acquired(leader));
  }

  private async acquired(lock: Lock): Promise<void> {
    if (this.lock !== lock) return;
    // The hooks before it, or a stall, may have outlived the lease: another may lead now.
    if (!leaseLive(lock, this.runner.clock)) return;
    this.announced.add(lock);
    try {
      this.refuseLazy(await this.runner.runInChain(lock, () => this.candidate.onLeadershipAcquired?.(lock)), 'onLeadershipAcquired');
    } catch (error) {
      // A hook that blocked the event loop past the lease before it threw, in the same turn (the
      // deadline sweeper's timer had no turn): the term is lost, reported `expired` here, and
      // ends as a loss (lost()), not as a step-down whose signal says `stepped-down`.
      if (this.lock === lock) leaseLive(lock, this.runner.clock);
      if (this.lock !== lock) {
        // Stepped down or lost meanwhile: the hook's failure is its way of stopping.
        this.runner.logger.debug?.(`onLeadershipAcquired of ${this.where} ended with ${thrownText(error)} after the leadership ended.`);
        return;
      }
      this.runner.logger.error(`${this.refused.has(error as object) ? (error as Error).message : `onLeadershipAcquired of ${this.where} threw (${thrownText(error)})`}; stepping down.`, thrownStack(error));
      await this.stepDown(lock, 'onLeadershipAcquired threw');
      await this.toldOfStepDown(lock);
      this.retryLater();
    }
  }

  /**
   * The lease was lost (its signal aborted): tell the class, then try again later. The hooks
   * before it (the term's `onLeadershipAcquired`, which the aborted signal tells to stop) get a
   * ttl: one that never settles must not keep the class from hearing of the loss, nor this
   * instance out of the election for good.
   */
  private lost(lock: Lock): void {
    if (this.lock !== lock) return;
    this.lock = undefined;
    const ttl = this.runner.leaseOf(lock);
    // Shutdown cuts the wait for the earlier hooks short, so that the class is told at once, and
    // gives onLeadershipLost its own shutdownTimeout (see stop()).
    this.hooks = this.bounded(this.hooks, ttl, this.cutAtStop).then(async (settled) => {
      if (settled === TIMED_OUT) {
        this.runner.logger.warn(`onLeadershipAcquired of ${this.where} had not returned ${ttl} ms (its ttl) after its leadership ${quoteKey(this.key)} was lost; onLeadershipLost runs now, and the election goes on.`);
      }
      // onLeadershipLost gets a ttl too: one that never returns must not keep this instance out.
      if ((await this.bounded(this.callLost(lock), ttl, this.cutAfterStop)) === TIMED_OUT) {
        this.runner.logger.warn(`onLeadershipLost of ${this.where} had not returned ${ttl} ms (its ttl) after its leadership ${quoteKey(this.key)} was lost; the election goes on.`);
      }
      this.retryLater();
    });
  }

  /**
   * Waits on hooks bounded by a ttl (on the engine's clock), which shutdown ends: those in
   * `cutAtStop` at once, those in `cutAfterStop` once its own shutdownTimeout is spent. Either
   * way no timer of theirs outlives app.close(): a wait begun once its set was cut ends at once.
   */
  private bounded(work: Promise<unknown>, ms: number, cut: Set<AbortController>): Promise<unknown> {
    if (this.cut.has(cut)) return Promise.resolve(undefined);
    const controller = new AbortController();
    cut.add(controller);
    return settleWithin(work, ms, [controller.signal], this.runner.clock).then(
      (settled) => {
        cut.delete(controller);
        return settled;
      },
      () => {
        cut.delete(controller);
        return undefined;
      },
    );
  }

  private readonly cutAtStop = new Set<AbortController>();
  private readonly cutAfterStop = new Set<AbortController>();
  /** The sets stop() has cut. */
  private readonly cut = new WeakSet<Set<AbortController>>();

  private async stepDown(lock: Lock, why: string): Promise<void> {
    if (this.lock !== lock) return;
    this.lock = undefined;
    this.runner.logger.debug?.(`${this.where} steps down from ${quoteKey(this.key)}: ${why}.`);
    // The term is over: work tied to its signal stops, as at shutdown. The hook runs next, so
    // that the old leader has stopped acting before another can lead (the lease is still held).
    if (lock instanceof HeldLock) {
      lock.interrupt('stepped-down');
      // A term its hook released by hand before it threw: interrupt() leaves a lock being
      // released alone, and the release, once back, finds the term taken (as in stop()).
      if (!lock.signal.aborted) lock.endTerm();
    }
    // And the using() and @Locked calls running inside its hooks and runAsLeader() work, as at stop().
    this.runner.interruptCallsWithin?.([lock]);
    // Bounded as after a loss: a hook or a work that never returns must not keep the lease, nor
    // the instance out of the election. onLeadershipLost comes after the term's work, as at stop().
    await this.bounded(
      this.worksOf(lock).then(() => this.callLost(lock)),
      this.runner.leaseOf(lock),
      this.cutAfterStop,
    );
    await this.releaseLease(lock);
  }

  private releaseLease(lock: Lock): Promise<void> {
    // After the work runAsLeader() runs, in this term or an earlier one still winding down,
    // bounded as the hook is.
    const worksEnded = this.bounded(this.allWorks(), this.runner.leaseOf(lock), this.cutAfterStop);
    const released = worksEnded.then(() => {
      this.releasing = lock;
      return lock.release();
    });
    return released.catch((error: unknown) => {
      if (this.saidUnanswered.has(lock)) return;
      // Once the application shuts down, nothing sends it again after LockService's shutdown.
      const then = this.stopped ? 'it expires on its own' : 'it is sent again shortly, or expires on its own';
      this.runner.logger.warn(`${this.where} could not release the leadership ${quoteKey(this.key)} (${(error as Error).message}); ${then}.`);
    }).finally(() => {
      if (this.releasing === lock) this.releasing = undefined;
    });
  }

  /** The lease a step-down is giving back, until Redis answers: the hooks' turn waits for it. */
  private releasing?: Lock;
  /** Step-down releases whose lack of an answer stop() has already said. */
  private readonly saidUnanswered = new WeakSet<Lock>();

  /**
   * A step-down's onLeadershipLost comes after the term's runAsLeader() work, however long that
   * runs (the lease is given back a bound later all the same): this instance tries for the
   * leadership again only once the class has heard of the step-down. Led again before, it would
   * hear of it in the new term, and end that term's work (the docs' `this.socket?.close()`).
   */
  private async toldOfStepDown(lock: Lock): Promise<void> {
    // Called already within the step-down's bound (or nothing to tell): as before, no more waiting.
    if (this.telling.has(lock) || !this.announced.has(lock)) return;
    if (!this.stopped) {
      this.runner.logger.warn(
        `runAsLeader() work of ${this.where} was still running when it gave the lease ${quoteKey(this.key)} back after stepping down; onLeadershipLost runs once that work has ended, and this instance tries for the leadership again after it.`,
      );
    }
    await this.worksOf(lock);
    // The call the step-down chained after the same work (once per term), bounded as after a loss.
    await this.bounded(this.callLost(lock), this.runner.leaseOf(lock), this.cutAfterStop);
  }

  /** The onLeadershipLost call of each announced term: whoever asks again waits for that one. */
  private readonly telling = new WeakMap<Lock, Promise<void>>();

  /** Tells the class that `lock`'s term ended, once per term (and only for a term it heard begin). */
  private callLost(lock: Lock): Promise<void> {
    const telling = this.telling.get(lock);
    if (telling !== undefined) return telling;
    if (!this.announced.has(lock)) return Promise.resolve();
    this.announced.delete(lock);
    const told = this.tellLost(lock);
    this.telling.set(lock, told);
    return told;
  }

  private async tellLost(lock: Lock): Promise<void> {
    try {
      this.refuseLazy(await this.candidate.onLeadershipLost?.(lock), 'onLeadershipLost');
    } catch (error) {
      this.runner.logger.error(this.refused.has(error as object) ? (error as Error).message : `onLeadershipLost of ${this.where} threw (${thrownText(error)}).`, thrownStack(error));
    }
  }

  /** Refusals of what a hook returned (see refuseLazy): logged as they are, not as a hook that threw. */
  private readonly refused = new WeakSet<object>();

  /**
   * Refuses what `hook` returned if it is an Observable or a generator (as `runAsLeader()`'s work
   * is): awaited, it is a plain value, never subscribed nor iterated, so its work would never run,
   * and nothing would say so. Its onLeadershipAcquired is then one that threw (the instance steps down).
   */
  private refuseLazy(result: unknown, hook: 'onLeadershipAcquired' | 'onLeadershipLost'): void {
    try {
      refuseGenerator(result, `${hook} of ${this.where}`, hook, 'and the election neither subscribes to nor iterates what a hook returns: its work never ran');
    } catch (error) {
      this.refused.add(error as object);
      throw error;
    }
  }
}
