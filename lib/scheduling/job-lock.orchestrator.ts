import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Observable, isObservable, from, type Subscription } from 'rxjs';
import { closeGenerator, isGenerator } from '../core/engine/generator-result.js';
import { HeldLock } from '../core/engine/held-lock.js';
import { leaseLive } from '../core/engine/lease-deadline.js';
import { ReentrantLock } from '../core/engine/reentrant-lock.js';
import type { LockLogger } from '../core/engine/lock-logger.js';
import { neverSubscribed, undeclaredObservableWarning, type LockRunner } from '../core/engine/locked-call.js';
import { quoteKey } from '../core/keys/quote-key.js';
import { resolveModuleOptions } from '../core/options/lock-options.js';
import { settleWithin, TIMED_OUT } from '../core/time/settle-within.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { LockSkipReason } from '../interfaces/lock-event.interface.js';
import type { Lock } from '../interfaces/lock.interface.js';
import type { LockOptions, RedisLockModuleOptions } from '../interfaces/redis-lock-options.interface.js';
import { LockService } from '../lock.service.js';
import { LOCK_RUNNER } from '../redis-lock.constants.js';
import { REDIS_LOCK_MODULE_OPTIONS } from '../redis-lock.module-definition.js';
import { bindJob, jobDecorators, jobTtl, type JobBinding, type JobRole, type JobSpec } from './job-spec.js';
import { checkJobNamespace } from '../core/options/job-namespace.js';
import { LoopStallWatch } from './loop-stall-watch.js';

/**
 * A tick runs under the owner lease only with at least this share of its ttl left (a healthy
 * watchdog, renewing every third of the ttl, keeps about two thirds), and a claim that takes
 * the lease over from another instance counts for its tick only if it came back within
 * `OWNER_CLAIM_SHARE` of the ttl: together they keep one tick from running on two instances
 * when a claim is held up in the network, for ticks of two instances that fire up to a sixth
 * of the ttl apart (see `claim`).
 */
const OWNER_MARGIN_SHARE = 1 / 3;
const OWNER_CLAIM_SHARE = 1 / 6;

/** The owner lease of a call, and whether its claim came back too late to run this tick. */
interface OwnerLease {
  lock: Lock;
  late: boolean;
}

/** The locks one call took: the owner lease (`@OnOneInstance`) and the run lock (`@WithoutOverlapping`). */
interface Taken {
  owner?: Lock;
  run: Lock | null;
  /**
   * The owner lease as this run's chain sees it: the lease is kept between runs, so code a run
   * left behind (a timer, a callback) must find it over once the run ended, as a released lock.
   */
  ownerInRun?: ReentrantLock;
}

/** A call running user code, for shutdown: its locks, and when it ends. */
interface Running {
  job: JobBinding;
  taken: Taken;
  /**
   * Whether its code has returned (or its stream ended): a run whose run lock Redis has not
   * yet answered the release of is no run that ignores its signal.
   */
  codeEnded: boolean;
  /** Once its run lock is given back. */
  ended: Promise<void>;
}

/**
 * Runs the calls of `@WithoutOverlapping()` / `@OnOneInstance()` methods, and keeps the
 * `@OnOneInstance()` leases this instance owns between calls. At shutdown (module destroy,
 * before `LockService` closes) it refuses new calls, tells the running ones to stop (their
 * locks' signals abort with a `shutdown` `LockLostError`), waits for them at most
 * `shutdownTimeout`, then hands its leases back, so that another instance takes the job over
 * at its next tick.
 */
@Injectable()
export class JobLockOrchestrator implements OnModuleDestroy {
  /** The `<key>:owner` leases held, by owner key. */
  private readonly owners = new Map<string, Lock>();
  /** Acquisitions of a lease in flight, so that concurrent calls share one. */
  private readonly claiming = new Map<string, Promise<OwnerLease | null>>();
  /** The fencing token of the last owner lease this instance took, by owner key. */
  private readonly ownTokens = new Map<string, number>();
  private readonly running = new Set<Running>();
  /**
   * The run locks of this instance's runs, from their acquisition until the run ends: a run here
   * needs no Redis to be known, and after Redis lost its data (a restart without persistence,
   * `FLUSHALL`, a failover to a replica that missed it) its run lock is gone while it goes on.
   */
  private readonly localRuns = new Set<string>();
  /** The binding of each job method in each provider class. */
  private readonly bindings = new WeakMap<object, Map<JobSpec, JobBinding>>();
  private closing = false;
  /** Stalls of the event loop, watched from the first `@OnOneInstance()` job on (see `claim`). */
  private stalls?: LoopStallWatch;
  /** The module option `jobNamespace`, joined to default keys. */
  readonly namespace: string | undefined;
  private readonly shutdownTimeout: number;

  constructor(
    @Inject(LockService) private readonly locks: LockService,
    @Inject(REDIS_LOCK_MODULE_OPTIONS) options: RedisLockModuleOptions,
  ) {
    this.namespace = checkJobNamespace(options?.jobNamespace);
    const resolved = resolveModuleOptions(options, { needsRedis: false });
    this.shutdownTimeout = resolved.shutdownTimeout;
    this.moduleTtl = resolved.ttl;
  }

  /** The module's `ttl`, which a job without a `ttl` of its own takes. */
  private readonly moduleTtl: number;

  private get runner(): LockRunner {
    return this.locks[LOCK_RUNNER];
  }

  private get logger(): LockLogger {
    return this.runner.logger;
  }

  /** The names `spec` has in the provider class `type` (a subclass has its own). */
  bind(spec: JobSpec, type: unknown): JobBinding {
    const owner = typeof type === 'function' ? type : Object;
    let byClass = this.bindings.get(owner);
    if (byClass === undefined) this.bindings.set(owner, (byClass = new Map()));
    let job = byClass.get(spec);
    if (job === undefined) {
      const name = (owner as { name?: unknown }).name;
      const className = typeof name === 'string' && name.length > 0 ? name : spec.className;
      byClass.set(spec, (job = bindJob(spec, className, this.namespace)));
      // A beat every twelfth of the ttl tells a stall of a sixth of it.
      if (spec.OnOneInstance !== undefined && this.stopping === undefined) {
        (this.stalls ??= new LoopStallWatch(this.runner.clock)).watch(((jobTtl(spec, 'OnOneInstance') ?? this.moduleTtl) * OWNER_CLAIM_SHARE) / 2);
      }
    }
    return job;
  }

  /** Runs one call of a job method under its locks, or skips it (resolving `undefined`). */
  run(job: JobBinding, invoke: () => unknown): Promise<unknown> {
    // Synchronously, in the caller's chain, which holds the run's locks.
    if (this.withinOtherJobsRun(job)) return new Promise((resolve) => resolve(invoke()));
    if (this.closing) {
      this.skipped(job, 'shutting-down');
      return Promise.resolve(undefined);
    }
    return this.take(job).then((taken) => (taken === undefined ? undefined : this.execute(job, taken, invoke)));
  }

  /**
   * For methods declared to return an Observable: the locks are taken when it is subscribed
   * and held until the stream completes, errors or is unsubscribed; a skipped call completes
   * without a value.
   */
  runObservable(job: JobBinding, invoke: () => unknown): Observable<unknown> {
    return new Observable((subscriber) => {
      let inner: Subscription | undefined;
      let end: (() => Promise<void>) | undefined;
      if (this.withinOtherJobsRun(job)) return toObservable(invoke()).subscribe(subscriber);
      if (this.closing) {
        this.skipped(job, 'shutting-down');
        subscriber.complete();
        return;
      }
      this.take(job).then(
        (taken) => {
          if (taken === undefined) return subscriber.complete();
          if (this.closing) {
            void this.giveBack(job, taken.run);
            this.skipped(job, 'shutting-down');
            return subscriber.complete();
          }
          end = this.track(job, taken);
          if (subscriber.closed) return void end();
          try {
            inner = this.inChain(taken, () => toObservable(invoke()).subscribe(subscriber));
          } catch (error) {
            subscriber.error(error);
          }
        },
        (error: unknown) => subscriber.error(error),
      );
      return () => {
        inner?.unsubscribe();
        void end?.();
      };
    });
  }

  /**
   * Shutdown, once: the explorer starts it beside the elections' (jobs and leaders are told to
   * stop together, within one shutdownTimeout), and Nest calls it again for this provider.
   */
  onModuleDestroy(): Promise<void> {
    return (this.stopping ??= this.stop());
  }

  private stopping?: Promise<void>;

  /** @internal Whether its application has begun to shut down (an object given to a later application gets that one's). */
  get shutDown(): boolean {
    return this.stopping !== undefined;
  }

  private async stop(): Promise<void> {
    // One shutdownTimeout for the running jobs and the leases' hand-back together.
    const deadline = performance.now() + this.shutdownTimeout;
    this.closing = true;
    this.stalls?.stop();
    const leases = [...this.owners.values()];
    this.owners.clear();
    const runs = [...this.running];
    let overran = false;
    // Tell running jobs first (the pattern in docs/jobs-and-leaders.md loops until its signal aborts); their locks
    // stay held and renewed until they end, so that no other instance starts meanwhile.
    for (const { taken } of runs) {
      // A lease whose local deadline passed (a stall the close began as the event loop came back
      // from, before the deadline sweeper's turn) is reported `expired` first: another instance
      // may hold it by now, and `shutdown` would tell the run it is still held until it ends.
      for (const lock of [taken.owner, taken.run]) if (lock instanceof HeldLock && leaseLive(lock, this.runner.clock)) lock.interrupt();
      // And the using() and @Locked calls it waits for, which stop on their own locks' signals.
      this.runner.interruptCallsWithin?.([taken.ownerInRun, taken.run].filter((lock): lock is Lock => lock != null));
    }
    if (runs.length > 0) {
      const ended = await settleWithin(Promise.all(runs.map((run) => run.ended)), Math.max(0, deadline - performance.now()));
      if (ended === TIMED_OUT) {
        for (const run of runs) {
          if (!this.running.has(run)) continue;
          if (run.codeEnded) {
            // Redis is what is late (cut off, frozen): the release's own failure is warned about
            // when LockService's shutdown ends it.
            this.logger.debug?.(`${run.job.where} ended on its signal; Redis has not answered the release of its run lock ${quoteKey(run.job.key)} within shutdownTimeout.`);
            continue;
          }
          overran = true;
          this.logger.warn(
            `${run.job.where} was still running ${this.shutdownTimeout} ms (shutdownTimeout) after its signal aborted for shutdown; its locks are given back while it runs.`,
          );
        }
      }
    }
    // Then hand the leases back: another instance takes the job over at its next call. Redis
    // may not answer (cut off, frozen): waiting longer than shutdownTimeout would keep the
    // application from ever closing, and the lease expires on its own.
    await Promise.all(leases.map((lease) => this.handBack(lease, overran ? 0 : deadline)));
  }

  /** `deadline` 0: the running work used all of shutdownTimeout, and the release is not timed. */
  private async handBack(lease: Lock, deadline: number): Promise<void> {
    const released = lease.release().then(
      () => undefined,
      (error: unknown) => (error as Error).message,
    );
    const left = deadline - performance.now();
    if (deadline === 0 || left <= 0) {
      // The runs (or Redis' answer to their run locks' release) used all of shutdownTimeout: the
      // release is not waited for here. It goes on, and LockService's own shutdown waits for it;
      // if that ends it unanswered, the lease stays in Redis until its ttl, which is said then.
      void released.then((failure) => {
        if (failure !== undefined) this.logger.warn(`Could not hand the lease ${quoteKey(lease.key)} back (${failure}); it expires on its own.`);
      });
      this.logger.debug?.(`Handing the lease ${quoteKey(lease.key)} back after shutdownTimeout was spent on running work.`);
      return;
    }
    const failure = await settleWithin(released, left);
    if (failure === undefined) this.logger.debug?.(`Handed the lease ${quoteKey(lease.key)} back (shutting down).`);
    else {
      const why = failure === TIMED_OUT ? `no answer from Redis within shutdownTimeout, ${this.shutdownTimeout} ms` : failure;
      // A release Redis refused is sent again on its backoff (see UnconfirmedReleases).
      const then = failure === TIMED_OUT ? 'it expires on its own' : 'it is sent again shortly, or expires on its own';
      this.logger.warn(`Could not hand the lease ${quoteKey(lease.key)} back (${why}); ${then}.`);
    }
  }

  /** Takes the call's locks, or skips it (undefined). */
  private async take(job: JobBinding): Promise<Taken | undefined> {
    try {
      return await this.takeLocks(job);
    } catch (error) {
      // Shutdown ended an attempt in flight: the call is skipped, as one made a moment later is.
      if (!this.closing) throw error;
      this.skipped(job, 'shutting-down');
      return undefined;
    }
  }

  private async takeLocks(job: JobBinding): Promise<Taken | undefined> {
    let owner: Lock | undefined;
    if (job.spec.OnOneInstance) {
      const lease = await this.ownerLease(job);
      if (lease === undefined) {
        // A claim that came back once the close began gave the lease back: nobody owns it.
        this.skipped(job, this.closing ? 'shutting-down' : 'other-owner', true);
        return undefined;
      }
      if (lease.late || !this.ownerMargin(lease.lock)) {
        this.skipped(job, 'owner-uncertain');
        return undefined;
      }
      owner = lease.lock;
    }
    let run: Lock | null = null;
    if (job.spec.WithoutOverlapping) {
      if (this.localRuns.has(job.key)) {
        this.skipped(job, 'held-elsewhere');
        return undefined;
      }
      run = await this.outsideChain(() => this.locks.tryAcquire(job.key, this.lockOptions(job, 'WithoutOverlapping', job.runName, job.where)));
      // Another call here may have taken it meanwhile, Redis having lost the first one's.
      if (run !== null && this.localRuns.has(job.key)) {
        await this.release(run);
        run = null;
      }
      if (run === null) {
        this.skipped(job, 'held-elsewhere');
        return undefined;
      }
      this.localRuns.add(job.key);
    }
    if (this.closing) {
      await this.giveBack(job, run);
      this.skipped(job, 'shutting-down');
      return undefined;
    }
    // A stall since the locks were taken (a blocked event loop) may have outlived a lease, and
    // another instance may hold it now: never start a run on it.
    const ownerLive = owner === undefined || leaseLive(owner, this.runner.clock);
    const runLive = run === null || leaseLive(run, this.runner.clock);
    if (!ownerLive || !runLive) {
      await this.giveBack(job, run);
      // Named by the lease that ran out: the owner lease, kept between calls, has less left.
      this.skipped(job, 'lease-expired', !ownerLive);
      return undefined;
    }
    return { owner, run };
  }

  private async execute(job: JobBinding, taken: Taken, invoke: () => unknown): Promise<unknown> {
    if (this.closing) {
      await this.giveBack(job, taken.run);
      this.skipped(job, 'shutting-down');
      return undefined;
    }
    const end = this.track(job, taken);
    let value: unknown;
    try {
      const result = this.inChain(taken, invoke);
      // A method declared to return an Observable runs at subscription (runObservable): one that
      // returns one here had no readable type, inferred or imported with `import type` (TypeScript
      // emits `Object` for it, which the wrapper cannot tell from a declared type).
      const schedule = this.schedules.get(job);
      if (isObservable(result)) this.warnUndeclaredObservable(job, schedule);
      value = await result;
      // Through a Promise (an async method): the schedule, which awaits it, never subscribes either.
      if (schedule !== undefined && isObservable(value)) this.warnUndeclaredObservable(job, schedule);
      // `next` first: a plain result has none, and costs no tag lookup.
      if (typeof (value as { next?: unknown } | null | undefined)?.next === 'function' && isGenerator(value)) {
        // Its body has not run, and must not run as its caller iterates, once the locks are given back.
        closeGenerator(value);
        throw new RedisLockError(
          `${jobDecorators(job.spec)} method ${job.where} returned a generator (or an iterator of a generator's shape, as a compiled generator method's), whose items come as it is iterated, after its locks were given back; return an array, a Promise or an Observable (held until it completes).`,
        );
      }
    } catch (error) {
      await end();
      throw error;
    }
    if (!isObservable(value)) {
      await end();
      return value;
    }
    return this.holdWhileSubscribed(job, taken, value, end);
  }

  /**
   * Once per method: its type, inferred, says Observable to its callers, who get a Promise of it
   * (`.pipe is not a function`); only a declared return type lets the call return an Observable.
   */
  private warnUndeclaredObservable(job: JobBinding, schedule: string | undefined): void {
    if (this.undeclaredWarned.has(job.spec)) return;
    this.undeclaredWarned.add(job.spec);
    const method = `${jobDecorators(job.spec)} method ${job.where}`;
    // Declaring the type, the usual remedy, is refused at startup for a scheduled method.
    this.logger.warn(schedule === undefined ? undeclaredObservableWarning(method) : `${method} returned an Observable, and ${neverSubscribed(schedule)}`);
  }

  private readonly undeclaredWarned = new WeakSet<JobSpec>();

  /**
   * Set by the explorer at startup: the job methods `@nestjs/schedule` runs, and by which of its
   * decorators. It awaits what they return and never subscribes to an Observable: its work never runs.
   */
  scheduledBy(job: JobBinding, schedule: string | undefined): void {
    if (schedule === undefined) this.schedules.delete(job);
    else this.schedules.set(job, schedule);
  }

  private readonly schedules = new WeakMap<JobBinding, string>();

  /**
   * An Observable result of a method not declared to return one: its locks were taken at call
   * time, so they are held until the stream ends. A stream nobody subscribes to would hold them
   * for ever, so they are given back after the run lock's ttl, and a later subscription fails.
   */
  private holdWhileSubscribed(job: JobBinding, taken: Taken, source: Observable<unknown>, end: () => Promise<void>): Observable<unknown> {
    let state: 'waiting' | 'subscribed' | 'expired' | 'ended' = 'waiting';
    const lock = (taken.run ?? taken.owner)!;
    const ttl = this.runner.leaseOf(lock);
    // The run's signal aborts when its lock is lost or at shutdown: no user code runs for a
    // stream nobody subscribed, so the run ends then, and shutdown does not wait for it.
    const ended = (): void => {
      if (state !== 'waiting') return;
      state = 'ended';
      timer.cancel();
      void end();
    };
    const timer = this.runner.clock.setTimer(() => {
      if (state !== 'waiting') return;
      state = 'expired';
      lock.signal.removeEventListener('abort', ended);
      const schedule = this.schedules.get(job);
      this.logger.warn(
        `${job.where}: the Observable it returned was not subscribed within its lock's ttl (${ttl} ms); its run ended. ` +
          (schedule === undefined ? "Declare the method's return type as Observable to take the lock at subscription." : neverSubscribed(schedule)),
      );
      void end();
    }, ttl, true);
    lock.signal.addEventListener('abort', ended, { once: true });
    // A method that returned its Observable after the signal aborted (it stopped on it) would
    // never hear the event: the run ends now.
    if (lock.signal.aborted) ended();
    return new Observable((subscriber) => {
      if (state !== 'waiting') {
        const when = state === 'expired' ? "after its lock's ttl, when its run had ended" : state === 'ended' ? 'after its run had ended (its lock lost, or the application shut down)' : "a second time: its run is its first subscription's, held while that one lasts";
        subscriber.error(new RedisLockError(`${job.where}: its Observable was subscribed ${when}; call the method again.`));
        return;
      }
      state = 'subscribed';
      timer.cancel();
      lock.signal.removeEventListener('abort', ended);
      let inner: Subscription | undefined;
      if ((taken.owner !== undefined && !leaseLive(taken.owner, this.runner.clock)) || (taken.run !== null && !leaseLive(taken.run, this.runner.clock))) {
        subscriber.error((taken.run ?? taken.owner)!.signal.reason);
      } else {
        inner = this.inChain(taken, () => source.subscribe(subscriber));
      }
      return () => {
        inner?.unsubscribe();
        void end();
      };
    });
  }

  /**
   * Whether the call is made within the run of another job method that holds every lock this one
   * would take: the method a subclass' job overrides, called with `super` (bound to the subclass,
   * both have its key). Taking those locks again, outside the chain, would find them held by the
   * very run that made the call and skip it; it is part of that run. A call of the method whose
   * run it is (recursion, a timer the run started) is not, and is skipped.
   */
  private withinOtherJobsRun(job: JobBinding): boolean {
    const { spec } = job;
    let run: Lock | undefined;
    let owner: Lock | undefined;
    try {
      run = spec.WithoutOverlapping ? this.locks.current(job.key) : undefined;
      owner = spec.OnOneInstance ? this.locks.current(job.ownerKey) : undefined;
    } catch {
      // A key no lock can have: the call's own acquisition refuses it, through its promise.
      return false;
    }
    const outer = this.runOf.get((run ?? owner)!);
    if (outer === undefined || outer === spec) return false;
    return (!spec.WithoutOverlapping || this.runOf.get(run!) === outer) && (!spec.OnOneInstance || this.runOf.get(owner!) === outer);
  }

  /** The job whose run holds a run lock, or an owner lease as the run's chain carries it. */
  private readonly runOf = new WeakMap<Lock, JobSpec>();

  /**
   * Marks the call as running until the returned function is called: that releases the run
   * lock (once, however often it is called) and resolves when it is given back.
   */
  private track(job: JobBinding, taken: Taken): () => Promise<void> {
    let done!: () => void;
    const running: Running = { job, taken, codeEnded: false, ended: new Promise<void>((resolve) => (done = resolve)) };
    this.running.add(running);
    if (taken.owner !== undefined) taken.ownerInRun ??= new ReentrantLock(taken.owner);
    for (const lock of [taken.run, taken.ownerInRun]) if (lock != null) this.runOf.set(lock, job.spec);
    let ending: Promise<void> | undefined;
    return () => {
      running.codeEnded = true;
      return (ending ??= this.giveBack(job, taken.run).finally(() => {
        void taken.ownerInRun?.release();
        this.running.delete(running);
        done();
      }));
    };
  }

  /** The run has ended (or never started): its run lock is released. */
  private giveBack(job: JobBinding, run: Lock | null): Promise<void> {
    if (run !== null) this.localRuns.delete(job.key);
    return this.release(run);
  }

  /**
   * A job's locks are taken outside the caller's call chain, never re-entered: a call made from
   * within a run (a timer or a callback it started, a recursive call) carries the run's locks,
   * and would otherwise run beside it, or, once the lease it carries was lost, fail for ever.
   */
  private outsideChain<T>(fn: () => T): T {
    return this.runner.outsideChain?.(fn) ?? fn();
  }

  /** Runs `fn` with the call's locks on the chain: `current()` is the run lock, `current(ownerKey)` the lease. */
  private inChain<T>(taken: Taken, fn: () => T): T {
    const inRun = taken.run === null ? fn : () => this.runner.runInChain(taken.run!, fn);
    if (taken.owner === undefined) return inRun();
    taken.ownerInRun ??= new ReentrantLock(taken.owner);
    return this.runner.runInChain(taken.ownerInRun, inRun);
  }

  private release(run: Lock | null): Promise<void> {
    if (run === null) return Promise.resolve();
    return run.release().catch((error: unknown) => {
      this.logger.warn(`Release of lock ${quoteKey(run.key)} failed (${(error as Error).message}); its lease will expire on its own.`);
    });
  }

  /**
   * Renewed whatever the module's `autoRenew` says of the application's own locks: a run lock
   * that lapsed mid-run would let another instance run the job beside it, and an owner lease
   * that lapsed between calls would hand the job to another instance.
   */
  private lockOptions(job: JobBinding, role: JobRole, name: string, label: string): LockOptions {
    // Always a ttl, so always its own renewal interval (a third of it): the module's may be
    // longer (anything under its ttl less the drift margin), and an owner lease renewed later
    // than two thirds in falls below `OWNER_MARGIN_SHARE` on a healthy Redis, where its owner
    // skips the ticks as uncertain and nobody runs them.
    return { ttl: jobTtl(job.spec, role) ?? this.moduleTtl, name, label, autoRenew: true };
  }

  /**
   * Whether the owner lease has enough left for this instance to be sure no other one runs the
   * tick: another instance's claim of it, made for the same tick, counts only if it came back
   * within `OWNER_CLAIM_SHARE` of the ttl, so while this one keeps `OWNER_MARGIN_SHARE` of it the
   * two cannot both run one tick (see `claim`).
   */
  private ownerMargin(lease: Lock): boolean {
    if (!(lease instanceof HeldLock)) return true;
    return lease.deadline - this.runner.clock.now() >= lease.ttl * OWNER_MARGIN_SHARE;
  }

  /** The lease this instance owns for the job, taking it if it is free; undefined if not. */
  private async ownerLease(job: JobBinding): Promise<OwnerLease | undefined> {
    const held = this.owners.get(job.ownerKey);
    // Past its local deadline (a stalled event loop), the lease may be another instance's now.
    if (held !== undefined && leaseLive(held, this.runner.clock)) return { lock: held, late: false };
    let claim = this.claiming.get(job.ownerKey);
    if (claim === undefined) {
      claim = this.claim(job).finally(() => this.claiming.delete(job.ownerKey));
      this.claiming.set(job.ownerKey, claim);
    }
    return (await claim) ?? undefined;
  }

  /**
   * Claims the owner lease for the tick being called. A claim that came back late and took the
   * lease over from another instance may have waited in the network while that owner ran this
   * very tick and then lost its lease (cut off, paused): it keeps the lease, but this tick is
   * not run here (`late`); the next ones are. The previous owner ran the tick with at least `OWNER_MARGIN_SHARE` of its ttl
   * left, so a claim that succeeded reached Redis that long after the tick at least; one back
   * within `OWNER_CLAIM_SHARE` (less, for the ticks of two instances firing a little apart)
   * cannot have.
   */
  private async claim(job: JobBinding): Promise<OwnerLease | null> {
    const key = job.ownerKey;
    // A tick that fell due while the event loop was blocked is called as it runs again: its
    // claim counts from the stall's start, as one held up in the network does.
    const sentAt = this.stalls?.blockedSince(this.runner.clock.now()) ?? this.runner.clock.now();
    const lease = await this.outsideChain(() => this.locks.tryAcquire(key, this.lockOptions(job, 'OnOneInstance', job.ownerName, `${job.where} (@OnOneInstance)`)));
    if (lease === null) return null;
    // Fencing tokens of the lease count its holders: the one before ours was this instance, or
    // nobody (token 1: the first, on a store whose counters start at 1), unless the token before
    // ours is not the last one we held. A counter on Redis starts at a clock (the server's, or in
    // quorum mode the acquiring instance's), so there the first claim of a lease nobody held looks
    // like a take-over: a late one skips its tick (a decision, see
    // test/jobs/first-owner-claim-late-skips-once.spec.ts).
    // In quorum mode a re-claim by the last holder looks like one too: the masters set a counter
    // below the acquiring instance's clock to it, so the token is about that clock, not the last
    // one plus 1 (as after split votes of others' attempts, which raise the counters).
    const takenOver = lease.fencingToken > 1 && this.ownTokens.get(key) !== lease.fencingToken - 1;
    this.ownTokens.set(key, lease.fencingToken);
    // Late is counted to when the grant's reply was read, which Redis' grant came before: a pause
    // of this instance after that (GC, the events$ subscribers the grant runs) delayed no claim,
    // and skipped a tick nobody else could have run.
    const answeredAt = lease instanceof HeldLock ? lease.answeredAt : this.runner.clock.now();
    const late = takenOver && answeredAt - sentAt > this.runner.leaseOf(lease) * OWNER_CLAIM_SHARE;
    if (this.closing) {
      await lease.release().catch(() => undefined);
      return null;
    }
    this.owners.set(key, lease);
    this.logger.debug?.(`${job.where} runs on this instance: it took the lease ${quoteKey(lease.key)} (fencing token ${lease.fencingToken}).`);
    lease.signal.addEventListener(
      'abort',
      () => {
        if (this.owners.get(key) === lease) this.owners.delete(key);
      },
      { once: true },
    );
    return { lock: lease, late };
  }

  /** `ofLease`: the skip came from the owner lease (its claim, or its end), whatever the reason. */
  private skipped(job: JobBinding, reason: LockSkipReason, ofLease = false): void {
    // The owner lease's reasons name it, as does any reason of a job that has no run lock.
    const aboutOwner = ofLease || reason === 'other-owner' || reason === 'owner-uncertain' || !job.spec.WithoutOverlapping;
    const [key, name] = aboutOwner ? [job.ownerKey, job.ownerName] : [job.key, job.runName];
    this.logger.debug?.(`Skipped ${job.where}: ${describeSkip(reason, key)}.`);
    if (this.runner.listening) this.runner.emit({ type: 'skipped', key, name, reason, where: job.where, at: Date.now() });
  }
}

function describeSkip(reason: LockSkipReason, key: string): string {
  switch (reason) {
    case 'held-elsewhere':
      return `its run lock ${quoteKey(key)} is held: a run is still going, on this instance or another`;
    case 'other-owner':
      return `another instance owns the lease ${quoteKey(key)}`;
    case 'shutting-down':
      return 'the application is shutting down';
    case 'lease-expired':
      return `its lease ${quoteKey(key)} ran out (the event loop was blocked past its deadline) before the run could start`;
    case 'owner-uncertain':
      return `this instance could not be sure that no other one ran this tick: its claim of the lease ${quoteKey(key)} came back late, or the lease had too little left (the watchdog is behind)`;
  }
}

function toObservable(value: unknown): Observable<unknown> {
  return isObservable(value) ? value : from(Promise.resolve(value));
}
