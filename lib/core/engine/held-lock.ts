import { LockLostError, type LockLostReason } from '../../errors/lock-lost.error.js';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { RedisUnansweredError } from '../../errors/redis-unanswered.error.js';
import { RedisUnavailableError } from '../../errors/redis-unavailable.error.js';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { LockEvent } from '../../interfaces/lock-event.interface.js';
import type { Lock } from '../../interfaces/lock.interface.js';
import type { Clock } from '../time/clock.js';
import { setImmediate } from '../time/real-timers.js';
import type { DeadlineSweeper, Expiring } from './deadline-sweeper.js';
import type { LockRedisKeys } from '../keys/lock-key.js';
import { quoteKey } from '../keys/quote-key.js';
import { shownKeys } from '../keys/shown-keys.js';
import type { LockLogger } from './lock-logger.js';
import { ofLock } from './lock-diagnostics.js';
import { parseDuration, type Duration } from '../time/duration.js';
import { driftMargin, type LockTiming, MAX_TIMER_MS, MAX_TTL_MS, MIN_TTL_MS } from '../options/lock-options.js';
import { checkTtlWithinRetention } from '../options/fence-retention.js';
import type { ReleaseReply } from '../stores/lock-store.js';
import { RenewalRefusal, type LockStore, type RenewalOutcome } from '../stores/lock-store.js';
import type { Renewable, RenewalScheduler } from './renewal-scheduler.js';
import { LAST_ATTEMPT_GRACE_MS } from './waiter-timing.js';
import { ReleaseInFlight } from './release-in-flight.js';
import { ExtendsOnTheirWay } from './extends-on-their-way.js';
import { LastingRefusalError, holdsForeignData, lastingRefusal, passingReply, redirectedUntilGivenUp, storeFailure } from './store-failure.js';
import { lockSummary, type LockSummary, INSPECT } from './lock-summary.js';

/** Multi-key locks warned of at shutdown, by the keys array their parts share: one line each. */
const WARNED_AT_SHUTDOWN = new WeakSet<readonly string[]>();

/** What a held lock needs from the manager that created it. */
export interface LockOwner {
  readonly store: LockStore;
  /** What leases, deadlines and retries are measured with. */
  readonly clock: Clock;
  readonly logger: LockLogger;
  readonly scheduler: RenewalScheduler;
  readonly sweeper: DeadlineSweeper;
  /** The module's `fenceRetention` in ms (0: counters kept forever): `extend()` may not set a lease longer. */
  readonly fenceRetention: number;
  /** Whether anyone listens to events; spares building events nobody reads. */
  readonly listening: boolean;
  emit(event: LockEvent): void;
  /** The lock is no longer held (released or lost): stop tracking it. */
  forget(lock: HeldLock): void;
  /** Runs the owner-checked release script, handing the lock to the next waiter, and wakes that waiter if it is in this process. */
  releaseInRedis(names: LockRedisKeys, token: string): Promise<ReleaseReply>;
  /**
   * The release script alone (`releaseInRedis` without the wake, for a caller that chains
   * `wakeGranted` itself). `ttl`: the holder's, for a release that may park the lock (see `LockParking`).
   */
  sendRelease(names: LockRedisKeys, token: string, ttl?: number): Promise<ReleaseReply>;
  /** Wakes the waiters of this process a release handed the lock (or permits) to. */
  wakeGranted(names: LockRedisKeys, reply: ReleaseReply): void;
  /** Work that shutdown waits for (within its timeout) before the store's connections close. */
  cleanUp(work: Promise<unknown>): void;
  /** A release that failed without an answer: shutdown sends it again while `until` (its lease may still run). */
  unconfirmedRelease?(names: LockRedisKeys, token: string, until: number): void;
  /** Whether the application is shutting down (no connection may be left to send on). */
  readonly shuttingDown?: boolean;
  /** Whether every client behind the store was closed by its owner (see `clientsClosed`): asked after a failure only. */
  clientsClosed?(): boolean;
  /** Runs `fn` outside any call chain of the engine (see `LockManager.outsideChain`). */
  outsideChain?<T>(fn: () => T): T;
  /**
   * A lock no longer held (lost) whose release is on its way (`true`), or answered (`false`):
   * shutdown ends such releases too (see `HeldLock.endReleaseAtShutdown`).
   */
  releasingLost?(lock: HeldLock, inFlight: boolean): void;
  /** A held lock's release was sent on `channel` (see `ReleasesOnTheirWay`), `reply` its end (answered, or given up). */
  releaseSent?(channel: string, reply: Promise<unknown>): void;
}

type State = 'held' | 'released' | 'lost';

/** First retry of a failed renewal of a handed-over lock; later ones back off to the max. */
const RENEW_RETRY_MS = 25;
const MAX_RENEW_RETRY_MS = 200;

/**
 * One acquisition of a lock in Redis. Created only after the acquire script succeeded, so the
 * watchdog never runs for a lock that was not obtained.
 */
export class HeldLock implements Lock, Renewable, Expiring {
  /** Made on first use: most locks are released without anyone reading their signal. */
  private controller?: AbortController;
  private state: State = 'held';
  ttl: number;
  deadline: number;
  sweepIndex = -1;
  /** Taken with `fairness: 'barging'`: its release may park it (see `LockParking`). */
  parks = false;
  private renewInterval: number;
  private readonly autoRenew: boolean;
  /** Renewals are numbered so that a slow reply never moves the deadline set by a later one. */
  private renewalsSent = 0;
  private renewalApplied = 0;
  /**
   * The latest `extend()` sent, and the soonest local end of the leases of the extensions not
   * answered yet (up to it): a reply to a renewal sent before it must not move the deadline past
   * that end, since Redis may run those extensions next.
   */
  private shortenedAt = 0;
  private shortenedEnd = Infinity;
  /** The `extend()` calls not answered yet, each with the ttl its failure gives back (made by the first extend: most locks never extend). */
  private extendsOnTheirWay?: ExtendsOnTheirWay;
  /**
   * The release started (until it fails, when a later `release()` may try again). Until it is
   * answered the deadline sweeper may fail it (see `expire`): the client has no command timeout,
   * and a frozen Redis (or a network cut that resets nothing) would otherwise leave `release()`,
   * `using()` and every `@Locked` call waiting for as long as Redis is gone.
   */
  private releasing?: ReleaseInFlight;
  /** Whether `release()` was called while a release started by `releaseThen()` was in flight. */
  private releaseShared = false;
  private readonly acquiredAt: number;
  /**
   * When this instance read the reply that granted the lock: no earlier than Redis' grant, and
   * no later than a pause of the process after it (GC, a CPU-bound `events$` subscriber) makes
   * the code that asked see it (see `JobLockOrchestrator.claim`).
   */
  readonly answeredAt: number;
  /** Whether the caller got this lock: a handed-over lock given back unconfirmed was never theirs. */
  private handedOut = false;
  /**
   * When the caller got it, where its events' `heldMs` count from: the lease may have started
   * long before (a handed-over lock's at the waiter's last attempt, up to a refresh earlier),
   * and that time is the wait's, which `waitedMs` counts already.
   */
  private handedOutAt = 0;
  /** The first renewal of a handed-over lock, due within its grant lease (see `renewBy`). */
  private firstRenewal?: FirstRenewal;
  /** The lock's name for events and metrics (see `LockOptions.name`). */
  name?: string;
  /** The keys of the multi-key lock this key was taken for, for its events (see `LockEvent.keys`). */
  keys?: readonly string[];
  /**
   * A part of a multi-key call (`keys`) that has all its keys: its caller holds it. Before, the
   * call waits for a later key, and a loss of this one makes it give back and take every key again.
   */
  private inWholeLock = false;
  readonly fencingToken: number;

  constructor(
    private readonly owner: LockOwner,
    readonly key: string,
    private readonly names: LockRedisKeys,
    readonly token: string,
    fencingToken: number,
    timing: LockTiming,
    /** A moment no later than the start of the lease in Redis: the lease is counted from there. */
    leaseStart: number,
    /** The lease Redis set (shorter than ttl when a release handed the lock over). */
    lease: number,
  ) {
    // A lock taken with `fencing: false` has no token at run time (its public type is
    // `UnfencedLock`); inside the engine the field keeps `Lock`'s type.
    this.fencingToken = timing.unfenced ? (undefined as unknown as number) : fencingToken;
    this.ttl = timing.ttl;
    this.renewInterval = timing.renewInterval;
    this.autoRenew = timing.autoRenew;
    this.acquiredAt = leaseStart;
    this.ttlSince = leaseStart;
    this.answeredAt = owner.clock.now();
    this.deadline = leaseStart + lease - driftMargin(lease);
    owner.sweeper.track(this);
    if (this.autoRenew) owner.scheduler.add(this, this.renewInterval);
  }

  get lockKey(): string {
    return this.names.lock;
  }

  get signal(): AbortSignal {
    // Not checked against the deadline here (as `held` is): code that adds an abort listener to
    // the signal it reads must not get one already aborted, whose listeners never run.
    return (this.controller ??= new AbortController()).signal;
  }

  /** Released, or being released: over for its holder (a lost lock is not: its holder must see the loss). */
  get released(): boolean {
    return this.state === 'released' || this.releasing !== undefined;
  }

  get held(): boolean {
    this.expireIfPast();
    return this.state === 'held' && this.releasing === undefined;
  }

  /**
   * The deadline sweeper's timer cannot run while the event loop is held up (a GC pause, a
   * CPU-bound call, SIGSTOP): a holder that asks whether it still holds right after such a stall
   * learns of the loss then, before it acts under a lease another process may hold by now.
   */
  private expireIfPast(): void {
    if (this.state === 'held' && this.releasing === undefined && this.owner.clock.now() >= this.deadline) this.lose('expired');
  }

  async extend(duration?: Duration): Promise<void> {
    const before = { ttl: this.ttl, ttlSince: this.ttlSince };
    const shortenedAt = this.shortenedAt;
    const extending = this.extendOnce(duration);
    // Moved (to this call's renewal) only once its call went out with the new ttl set.
    const call = this.shortenedAt === shortenedAt ? undefined : (this.extendsOnTheirWay ??= new ExtendsOnTheirWay()).sent(before);
    try {
      await extending;
    } catch (error) {
      // Failed (an error, or not confirmed): the lock gets back the ttl it had, unless a later
      // extend() set another meanwhile. The watchdog's next renewal, a handed-over lock's first
      // renewal still due (with `autoRenew: false` too) or an extend() without a ttl renewed to
      // it, and an extension its caller was told had failed took effect a moment later. A
      // renewal sent while it was on its way went out with it, as Redis may have run this call.
      const back = call === undefined ? undefined : this.extendsOnTheirWay!.failed(call);
      if (back !== undefined) {
        this.ttl = back.ttl;
        this.ttlSince = back.ttlSince;
      }
      throw error;
    }
    if (call !== undefined) this.extendsOnTheirWay!.succeeded(call);
  }

  private async extendOnce(duration: Duration | undefined): Promise<void> {
    const ttl = duration === undefined ? undefined : this.checkedTtl(duration);
    this.assertHeld();
    const lease = ttl ?? this.ttl;
    const startedAt = this.owner.clock.now();
    const sequence = this.beginRenewal(startedAt);
    this.assertHeld();
    // The new ttl before the call: a renewal the watchdog sends while this one is on its way
    // runs after it in Redis, and with the old ttl it would shorten the lease again. The
    // watchdog's interval follows at once, to the shorter of the two leases' thirds, so that
    // whichever lease Redis holds now is renewed in time even if this call fails (a failed
    // extension to a shorter ttl left the watchdog renewing to it at the old, longer interval,
    // and the lock ran out while held); to the new one's once Redis confirmed it.
    const interval = ttl === undefined || ttl === this.ttl ? undefined : renewIntervalOf(ttl);
    if (interval !== undefined && interval < this.renewInterval) this.reschedule(interval);
    // The new ttl counts from here, for a first renewal still due too (see `ttlLeft`).
    this.ttlSince = startedAt;
    // A shorter lease may hold in Redis from the moment this call runs there, whether or not its
    // reply comes back: the deadline comes in now, and no reply pushes it back out past that
    // lease but this call's own (or a later renewal's).
    const end = startedAt + lease - driftMargin(lease);
    // Every extension still unanswered caps what a reply to a renewal sent before it may set: that
    // renewal's lease may be longer than this one's, which Redis runs after it (a renewal in
    // flight whose end is past the current deadline, or an earlier extension not answered yet).
    this.shortenedEnd = this.shortenedAt > this.renewalApplied ? Math.min(this.shortenedEnd, end) : end;
    this.shortenedAt = sequence!;
    if (end < this.deadline) {
      this.deadline = end;
      this.owner.sweeper.track(this);
    }
    this.ttl = lease;
    const renewed = await this.unlessEnded(this.owner.store.renew(this.names.lock, this.token, lease, this.fencingToken)).catch((error: unknown) => {
      // The lock's end came first (see `unlessEnded`): its error says so, and why, already.
      if (error === this.extensionsEndedBy) throw error;
      // The latest renewal, if no other went out since: its refusal for now (LOADING) is what a loss names.
      this.renewalFailed(sequence!, error);
      // Released (or lost) while the renewal was on its way: that, not "still held", is what holds now.
      this.assertHeld(true);
      // A quorum's majority refused it for good, or for data of another kind under the lock's keys
      // (its replies in the message): said of this lock, as one Redis' refusal is.
      if (error instanceof LastingRefusalError || (error instanceof RedisLockError && holdsForeignData(error))) throw new RedisLockError(`Lock ${quoteKey(this.key)} could not be extended: ${error.message.replace(/\.$/, '')}; it is still held until its lease deadline.`, { cause: error.cause });
      // A client its owner closed is named so, with what to do, as a read or an acquire on it is.
      const closed = !(error instanceof RedisLockError) && this.owner.clientsClosed?.() === true;
      throw storeFailure(error, `Lock ${quoteKey(this.key)} could not be extended`, '; it is still held until its lease deadline', closed);
    });
    this.completeRenewal(sequence!, startedAt, lease, renewed);
    // A stall between the call and its reply may have outlived the new lease (see completeRenewal).
    this.expireIfPast();
    this.assertHeld(true);
    if (renewed === undefined) {
      throw new RedisLockError(`Lock ${quoteKey(this.key)} could not be extended: Redis did not confirm it (not enough nodes answered, or its keys were not all found on one node, as while a Cluster slot migrates). It is still held until its lease deadline.`);
    }
    if (interval !== undefined && interval !== this.renewInterval && this.ttl === lease) this.reschedule(interval);
  }

  /** `extend()`'s new lease; a bad one is refused naming the call and the lock. */
  private checkedTtl(duration: Duration): number {
    try {
      const ttl = parseDuration(duration, 'ttl', MIN_TTL_MS, MAX_TTL_MS);
      checkTtlWithinRetention(ttl, duration, this.owner.fenceRetention);
      return ttl;
    } catch (error) {
      throw error instanceof InvalidLockOptionsError && error.where === undefined ? error.within(`extend(ttl) of lock ${quoteKey(this.key)}`) : error;
    }
  }

  /** The `extend()` calls waiting for a reply, told when the lock ends first (see `unlessEnded`). */
  private extensions?: Set<(error: Error) => void>;
  /** What they were told. */
  private extensionsEndedBy?: Error;

  /**
   * `reply`, or the lock's end if it comes first (lost: its `LockLostError`; a release Redis did
   * not answer by the end of the lease: its error): Redis may never answer an extension (a frozen
   * server, a network cut that resets nothing; the client has no command timeout), and its
   * caller must not wait past the lease it was for. The lock's signal will not do: shutdown
   * aborts it while the lock is still held.
   */
  private unlessEnded<T>(reply: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const lost = (error: Error): void => reject(error);
      const listeners = (this.extensions ??= new Set());
      listeners.add(lost);
      reply.then(
        (value) => {
          listeners.delete(lost);
          resolve(value);
        },
        (error: unknown) => {
          listeners.delete(lost);
          reject(error);
        },
      );
    });
  }

  release(): Promise<void> {
    if (this.releasing === undefined) return this.releaseInRedis().promise();
    // Someone else asked for the release under way: a release started by releaseThen() must
    // now reject on failure, for this caller.
    this.releaseShared = true;
    return this.releasing.promise();
  }

  /**
   * `release()` for a caller that only needs to know when it is over (every `@Locked` call):
   * `onReleased` or `onFailed` runs from the release's own `then`, with no promise of its own
   * (one is made only if someone else asks for the release meanwhile). A failed release is the
   * caller's to report; it rejects only for someone else who asked for it meanwhile, so a
   * failure nobody else awaits is no unhandled rejection. Neither callback may throw.
   */
  releaseThen(onReleased: () => void, onFailed: (error: unknown) => void): void {
    if (this.releasing !== undefined) {
      this.releaseShared = true;
      this.releasing.promise().then(onReleased, onFailed);
      return;
    }
    this.releaseShared = false;
    this.releaseInRedis(onReleased, onFailed);
  }

  /** Application shutdown: tell the holder, then give the lock back. */
  async shutdown(): Promise<void> {
    // A release under way is a normal end: let it finish rather than abort the holder.
    if (this.releasing !== undefined) return this.releasing.promise().catch(() => undefined);
    if (this.state !== 'held') return;
    this.lose('shutdown');
    // The holder's own release() afterwards (its code winding down on the shutdown signal, an
    // `await using` scope ending) is this one: the connections may be closed by then, and the
    // lock was given back already (or expires on its own if Redis did not answer).
    // One that fails (a failover answering READONLY) is sent again while shutdown lasts. One
    // Redis does not answer at all ends with shutdown (see `endReleaseAtShutdown`): code that
    // awaits it (an HTTP request the server waits for before it closes) must not hang the close.
    const release = (this.releasing = new ReleaseInFlight(false, undefined));
    release.atShutdown = true;
    const given = release.promise();
    this.owner.releaseInRedis(this.names, this.token).then(
      () => this.givenBack(release),
      () => {
        if (!release.answered) this.owner.unconfirmedRelease?.(this.names, this.token, this.deadline + this.ttl);
        this.givenBack(release);
      },
    );
    await given;
  }

  private givenBack(release: ReleaseInFlight): void {
    if (release.answered) return;
    release.answered = true;
    release.released();
  }

  /**
   * @internal Shutdown is over (or out of time): a release still waiting for Redis ends now, as
   * one unanswered by the end of its lease does: the holder's rejects with a `RedisUnansweredError`
   * (its lease ends on its own in Redis), shutdown's own give-back resolves. Past this point
   * nothing bounds it (the deadline sweeper closes, and a client handed in stays open).
   */
  /** @internal The release on its way, settled whatever its outcome (shutdown waits for it). */
  releaseSettled(): Promise<void> {
    return this.releasing?.promise().catch(() => undefined) ?? Promise.resolve();
  }

  endReleaseAtShutdown(): void {
    const release = this.releasing;
    if (release === undefined || release.answered) return;
    if (release.atShutdown) {
      this.givenBack(release);
      return;
    }
    this.releaseUnconfirmed(release, new RedisUnansweredError(`Redis did not answer the release of lock ${quoteKey(this.key)} before the application's shutdown ended; its lease ends on its own in Redis.`));
  }

  /**
   * Tells the holder to stop (its signal aborts with a `LockLostError` for `reason`) while the
   * lock stays held and renewed, so that the holder's code can wind down before the lock is
   * given back (by `release()` or `shutdown()`): application shutdown's first step, and a
   * leader stepping down.
   */
  interrupt(reason: 'shutdown' | 'stepped-down' = 'shutdown'): void {
    if (this.state !== 'held' || this.releasing !== undefined) return;
    const controller = (this.controller ??= new AbortController());
    if (!controller.signal.aborted) controller.abort(new LockLostError(this.key, this.fencingToken, reason, this.autoRenew));
  }

  /**
   * @internal A leader's term ended by a `release()` by hand: its signal aborts (`stepped-down`),
   * as at every other end of a term, so that the hooks working until it aborts stop.
   */
  endTerm(): void {
    const controller = (this.controller ??= new AbortController());
    if (!controller.signal.aborted) controller.abort(new LockLostError(this.key, this.fencingToken, 'stepped-down', this.autoRenew));
  }

  /** Called once when a `release()` ends the lock (confirmed or not): a leader's term ends with it. */
  private onReleased?: () => void;

  /** @internal Hears the lock's end by `release()`, which aborts no signal (see `onReleased`). */
  whenReleased(listener: () => void): void {
    this.onReleased = listener;
  }

  private endedByRelease(): void {
    const listener = this.onReleased;
    this.onReleased = undefined;
    listener?.();
  }

  /**
   * Renews to the full ttl in the background (a handed-over lock starts on a short lease),
   * retrying until Redis confirms or the lease deadline passes: the watchdog's next tick may
   * come long after that short lease ended.
   */
  renewSoon(): void {
    void this.renewUntilConfirmed();
  }

  /**
   * Renews to the full ttl (as `renewSoon`) at `at` unless the lock was released or renewed by
   * then: a holder that gives a handed-over lock back within its grant lease costs no renewal.
   * Carried by the deadline sweeper, whose one timer serves every lock.
   */
  renewBy(at: number): void {
    if (this.state !== 'held') return;
    this.firstRenewal = new FirstRenewal(this, at);
    this.owner.sweeper.track(this.firstRenewal);
  }

  /**
   * Renews to the full ttl now (a lock without a watchdog: to what is left of its ttl): whether
   * Redis confirmed it (an error rejects).
   */
  async renewNow(): Promise<boolean> {
    const startedAt = this.owner.clock.now();
    const sequence = this.beginRenewal(startedAt);
    if (sequence === undefined) return false;
    const ttl = this.autoRenew ? this.ttl : this.ttlLeft(startedAt);
    const renewed = await this.owner.store.renew(this.names.lock, this.token, ttl, this.fencingToken);
    this.completeRenewal(sequence, startedAt, ttl, renewed);
    return renewed === true && this.held;
  }

  /**
   * A handed-over lock's grant lease is renewed without a watchdog too (see `renewBy`), but only
   * to its ttl counted from the lease's start (or from an `extend()` still unanswered), where a
   * lock taken by its own attempt ends: to the whole ttl from then, `autoRenew: false` held it up
   * to a third of the grant lease longer.
   */
  private ttlLeft(now: number): number {
    return Math.max(1, Math.floor(this.ttlSince + this.ttl - now));
  }

  /** Where `ttl` counts from: the lease's start, or the latest `extend()` that set it. */
  private ttlSince: number;

  /** The multi-key lock this key is a part of, told of the key's every loss (see `joinWholeLock`). */
  private wholeLockLost?: (loss: LockLostError) => void;

  /**
   * A part of a multi-key lock whose every key is held: its loss is now the caller's (see
   * `inWholeLock`). `onLost` hears each loss of the key, also one whose signal had aborted already
   * (a shutdown's or a step-down's, which keep the key held): that signal cannot abort again.
   * Returns what stops it.
   */
  joinWholeLock(onLost?: (loss: LockLostError) => void): () => void {
    this.inWholeLock = true;
    this.wholeLockLost = onLost;
    return () => {
      if (this.wholeLockLost === onLost) this.wholeLockLost = undefined;
    };
  }

  /** Set once a grant is renewed before its handover (see `renewBeforeHandover`). */
  private beforeHandover?: true;

  /**
   * `renewNow` of a grant taken late in its short lease, before it is handed out. Unanswered by
   * the lease's end, it is not given back (`abandon`): its waiter's next attempt, under the same
   * token, takes the lock if the grant still stands, and keeps the waiter's place in the queue.
   * Undefined when the grant was forgotten so before the reply came (its lease found over here by
   * the deadline sweeper or a watchdog tick, see `leaseRanOut`): their timers, due at the deadline
   * the caller waits until too, may run first, and the reply (a renewal it ran, likely) is then as
   * late as none; read as refused, the grant was given back.
   */
  async renewBeforeHandover(): Promise<boolean | undefined> {
    this.beforeHandover = true;
    const renewed = await this.renewNow();
    return renewed || !this.forgotten ? renewed : undefined;
  }

  /** Abandoned: lost without a loss told (its signal aborts for every other loss). */
  private get forgotten(): boolean {
    return this.state === 'lost' && this.controller?.signal.aborted !== true;
  }

  /**
   * A grant whose renewal before the handover went unanswered, never handed out: forgotten here
   * without a release, which could reach Redis after the waiter's next attempt under the token.
   */
  abandon(): void {
    if (this.state !== 'held' || this.handedOut) return;
    this.state = 'lost';
    this.stopRenewing();
    this.owner.forget(this);
  }

  /**
   * The lease ran out here: the lock is lost, but a grant renewed before its handover and never
   * handed out is forgotten (see `renewBeforeHandover`). The sweeper's timer and a watchdog tick
   * (due with it, or late after a stall) may each find it over first, and end it alike: a tick
   * that declared the grant lost gave it back to the waiter behind, and its waiter went on under
   * a new token, at the back of the queue.
   */
  private leaseRanOut(): void {
    if (this.beforeHandover !== undefined && !this.handedOut) this.abandon();
    else this.lose('expired');
  }

  /** The caller has the lock now: from here on its loss is reported. */
  handOut(): this {
    this.handedOut = true;
    this.handedOutAt = this.owner.clock.now();
    return this;
  }

  private async renewUntilConfirmed(): Promise<void> {
    for (let delay = RENEW_RETRY_MS; this.held; delay = Math.min(delay * 2, MAX_RENEW_RETRY_MS)) {
      const renewal = this.renewNow();
      // The renewal just sent, if one was (see `beginRenewal`).
      const sequence = this.renewalsSent;
      // A refusal that passes (LOADING) is kept, for the loss to name if the lease runs out so.
      renewal.catch((error: unknown) => this.renewalFailed(sequence, error));
      try {
        if (await renewal) return;
      } catch (error) {
        // Every later try would be refused alike (an ACL changed under the application): the
        // holder is told now, as of a watchdog renewal's (see `renewalRefused`), not at the lease's end.
        const closed = this.owner.clientsClosed?.() === true;
        if (lastingRefusal(error, closed) !== undefined) return this.renewalRefused(sequence, error, closed);
        // passing: try again while the lease lasts
      }
      const left = this.deadline - this.owner.clock.now();
      // The deadline sweeper reports the loss when the lease runs out.
      if (!this.held || left <= 0) return;
      await new Promise((resolve) => this.owner.clock.setTimer(() => resolve(undefined), Math.min(delay, left), true));
    }
  }

  beginRenewal(startedAt: number): number | undefined {
    if (this.state !== 'held' || this.releasing !== undefined) return undefined;
    if (startedAt >= this.deadline) {
      // The event loop (or a hung renewal) let the lease run out locally: never keep it silently.
      this.leaseRanOut();
      return undefined;
    }
    return ++this.renewalsSent;
  }

  completeRenewal(sequence: number, startedAt: number, ttl: number, renewed: RenewalOutcome): void {
    // A reply that lands while the lock is being released must not track it again.
    if (this.state !== 'held' || this.releasing !== undefined || renewed === undefined) return;
    // Refused with Redis' reason (a hash at the lock's key): the loss names it.
    if (renewed instanceof RenewalRefusal) return this.renewalRefused(sequence, renewed.error);
    if (!renewed) {
      this.lose('refused');
      return;
    }
    if (sequence > this.renewalApplied) {
      this.renewalApplied = sequence;
      const end = startedAt + ttl - driftMargin(ttl);
      this.deadline = sequence < this.shortenedAt ? Math.min(end, this.shortenedEnd) : end;
      this.owner.sweeper.track(this);
    }
    // Renewed, but the event loop stalled past the new lease before the reply was read: over.
    if (this.owner.clock.now() >= this.deadline) {
      this.lose('expired');
      return;
    }
    // A renewal before the lock was handed out (a grant taken late in its short lease) is part of
    // its acquisition: listeners hear of the lock first, from its `acquired`.
    if (this.owner.listening && this.handedOut) {
      this.owner.emit({ type: 'renewed', key: this.key, name: this.name, ...(this.keys && { keys: this.keys }), fencingToken: this.fencingToken, latencyMs: this.owner.clock.now() - startedAt, at: Date.now() });
    }
    // Renewed (by the watchdog or `extend()`): a first renewal still due is not needed.
    if (sequence === this.renewalApplied) this.cancelFirstRenewal();
    this.keepFence();
  }

  renewalRefused(sequence: number, error: unknown, clientClosed = false): void {
    // A later renewal (an extend()) answered meanwhile says more than this one's refusal.
    if (this.state !== 'held' || this.releasing !== undefined || sequence < this.renewalApplied) return;
    this.lose('refused', storeFailure(error, `Renewal of lock ${quoteKey(this.key)}`, '', clientClosed));
  }

  private fenceKeptAt?: number;

  /**
   * A lock held for a third of `fenceRetention` (a leader's term, an owner lease, a long job)
   * pushes its fencing counter's expiry on: only a new token restarts it in the store, and a
   * counter gone while its holder still holds would give the next holder a token of a new
   * counter, started at the clock: below the paused holder's if the old one had outrun the clock
   * (over 1,000 tokens a second). Renewals come at least every third of the ttl, which is at most the
   * retention: the counter is pushed on before it can expire.
   */
  private keepFence(): void {
    const retention = this.owner.fenceRetention;
    if (retention === 0 || this.fencingToken === undefined || this.owner.store.keepFence === undefined) return;
    const now = this.owner.clock.now();
    if (now - (this.fenceKeptAt ?? this.acquiredAt) < retention / 3) return;
    this.fenceKeptAt = now;
    // Not waited for: a failure leaves the counter to the next renewal's try.
    this.owner.store.keepFence(this.names.fence).catch(() => (this.fenceKeptAt = undefined));
  }

  /**
   * The latest renewal that failed in a way that passes: its error when Redis answered it with a
   * refusal for now (LOADING, READONLY, BUSY). A lease that runs out so, no later renewal applied,
   * is lost saying Redis refused its renewals, not that Redis was unreachable.
   */
  private lastFailure?: { sequence: number; refusal: Error | undefined };

  renewalFailed(sequence: number, error: unknown): void {
    if (this.state !== 'held' || sequence <= this.renewalApplied || sequence < (this.lastFailure?.sequence ?? 0)) return;
    // A quorum's refusal for now by the masters that failed it carries the first as its cause.
    const refused = passingReply(error) || (error instanceof RedisUnavailableError && passingReply(error.cause));
    this.lastFailure = { sequence, refusal: refused ? (error as Error) : undefined };
  }

  /**
   * What Redis refused the renewals with for now, if it refused the latest one sent, none applied
   * since: a renewal sent after the refusal and not answered (Redis frozen, a quorum's master silent,
   * a batch left undecided) means the lease ran out to that silence, which the loss says.
   */
  private refusedForNow(): Error | undefined {
    const failure = this.lastFailure;
    return failure !== undefined && failure.sequence === this.renewalsSent && failure.sequence > this.renewalApplied ? failure.refusal : undefined;
  }

  expire(): void {
    const release = this.releasing;
    // Lost, or a grant renewed before its handover forgotten (see `leaseRanOut`). One its waiter
    // gave back (its call ended) has a release to settle as any other.
    if (release === undefined) return this.leaseRanOut();
    if (release.answered) {
      this.lose('expired');
      return;
    }
    // The release's answer is waited for until after the event loop's next poll for I/O: timers
    // run before the loop reads its sockets, so after a stall (a long GC pause, a busy CPU) an
    // answer that came in during it would otherwise count as missing (see `QuorumRound.expire`).
    // The lease's own end (above) is not put off: code the poll runs must find the lock lost.
    setImmediate(() => {
      if (this.releasing === release && !release.answered && this.sweepIndex === -1) this.releaseOverdue(release);
    });
  }

  /** A release Redis did not answer by the end of the lease (or a last attempt's grace). */
  private releaseOverdue(release: ReleaseInFlight): void {
    // Its lease is over, in Redis as here: the release can do nothing more than the expiry did.
    // A lock lost before its release had no lease left to end: it waited a last attempt's grace.
    const over = release.wasHeld
      ? 'by the end of its lease; the lease ends on its own in Redis.'
      : 'in time; the lock was lost before it: its lease had ended already and nothing was held (a lease an unanswered renewal kept in Redis ends on its own).';
    this.releaseUnconfirmed(release, new RedisUnansweredError(`Redis did not answer the release of lock ${quoteKey(this.key)} ${over}`));
  }

  /**
   * Not async, one `then`: every lock is released this way. With callbacks (`releaseThen`), they
   * are called from that `then`, and a failure rejects only for a caller of `release()`. Settled
   * by Redis' reply, or failed for want of one by the end of the lease (see `expire`): a reply
   * that comes later is too late to tell.
   */
  private releaseInRedis(onReleased?: () => void, onFailed?: (error: unknown) => void): ReleaseInFlight {
    const wasHeld = this.state === 'held';
    // A held lock stays on the sweeper until the reply: its deadline bounds the wait, but never
    // to less than a last attempt's grace (a lock used to the end of its lease, or released
    // after a stall, whose lease Redis may still hold, gets its answer).
    this.stopRenewing(wasHeld);
    if (wasHeld) {
      const least = this.owner.clock.now() + LAST_ATTEMPT_GRACE_MS;
      if (this.deadline < least) {
        this.deadline = least;
        this.owner.sweeper.track(this);
      }
    } else {
      // Lost (or released) before shutdown, whose give-back was tracked then: nothing to send,
      // and the connections may be closed already.
      if (this.owner.shuttingDown === true) {
        const over = (this.releasing = new ReleaseInFlight(false, undefined, onReleased, onFailed));
        over.answered = true;
        over.released();
        return over;
      }
      // A lost lock's lease is over here: its release waits a last attempt's grace at most (a
      // renewal Redis ran but did not answer may have kept it there: one unanswered is sent again).
      this.deadline = this.owner.clock.now() + Math.min(this.ttl, LAST_ATTEMPT_GRACE_MS);
      this.owner.sweeper.track(this);
      this.owner.releasingLost?.(this, true);
    }
    const store = this.owner.store;
    const release = (this.releasing = new ReleaseInFlight(wasHeld, store.connectionResets?.(), onReleased, onFailed));
    let reply: Promise<ReleaseReply>;
    try {
      // The wake goes in this one `then` rather than in a `then` of its own.
      // A FIFO lock is never parked, even where barging callers of its key take it greedily.
      reply = this.owner.sendRelease(this.names, this.token, this.parks ? this.ttl : undefined);
    } catch (error) {
      reply = Promise.reject(error);
    }
    reply.then(
      (settled) => this.releaseReplied(release, settled),
      (error: unknown) => {
        if (!release.answered) this.releaseUnconfirmed(release, error);
      },
    );
    // After the handler above: a waiter of this process it hands the lock to hears of it after it.
    // The release's end, not its reply: one Redis never answers is given up at the lease's end,
    // told `released` then, and no later grant of the key must wait on it.
    if (wasHeld && this.handedOut && this.owner.listening) this.owner.releaseSent?.(this.names.released, release.promise());
    return release;
  }

  private releaseReplied(release: ReleaseInFlight, settled: ReleaseReply): void {
    if (release.answered) return;
    const store = this.owner.store;
    // Refused after the connection was reset on its way: the client may have sent it again,
    // and the first run released (or handed over) the lock. Not a loss; not confirmed either.
    if (!settled.released && release.resets !== undefined && store.connectionResets!() !== release.resets) {
      this.releaseUnconfirmed(release, new RedisLockError(`The release of lock ${quoteKey(this.key)} was not confirmed: the connection to Redis was reset while it was on its way and the client sent it again; if its first run did not release the lock, its lease ends on its own.`));
      return;
    }
    this.answered(release);
    try {
      this.owner.wakeGranted(this.names, settled);
      this.releasedInRedis(release.wasHeld, settled);
    } catch (error) {
      this.releaseFailed(release, error);
      return;
    }
    release.released();
  }

  /** No answer (an error of the client's, or none by the end of the lease): the lease ends on its own. */
  private releaseUnconfirmed(release: ReleaseInFlight, cause: unknown): void {
    this.answered(release);
    // The library's own error as it is (but a quorum's unavailable for now, which names no call,
    // named so); a refusal asking again cannot change (NOPERM, an unknown command) was an answer,
    // saying what to fix; so was one that passes (LOADING, READONLY, BUSY...), which is sent again
    // like a lost one, and an ioredis Cluster's last refusal before it stopped following a slot
    // migration (TRYAGAIN, MOVED); anything else (a connection closed under it) was not answered.
    const error =
      cause instanceof RedisLockError || lastingRefusal(cause, false) !== undefined || holdsForeignData(cause)
        ? storeFailure(cause, `The release of lock ${quoteKey(this.key)}`, '; its lease ends on its own in Redis')
        : passingReply(cause) || redirectedUntilGivenUp(cause)
          ? new RedisLockError(`The release of lock ${quoteKey(this.key)}: Redis refused it for now (${(cause as Error).message.replace(/\.$/, '')}); its lease ends on its own in Redis.`, { cause })
          : new RedisLockError(`The release of lock ${quoteKey(this.key)} was not answered (${cause instanceof Error ? cause.message : String(cause)}); its lease ends on its own in Redis.`, { cause });
    // The holder is done with it either way: it is no longer renewed, and its lease expires
    // in Redis on its own. A later release() may try again: sooner is better.
    if (!release.wasHeld && this.owner.shuttingDown !== true) this.owner.unconfirmedRelease?.(this.names, this.token, this.owner.clock.now() + this.ttl);
    if (release.wasHeld && this.state === 'held') {
      this.state = 'released';
      this.owner.forget(this);
      this.owner.unconfirmedRelease?.(this.names, this.token, this.deadline + this.ttl);
      this.endedByRelease();
      // Told only of a lock its caller got (a grant given back before its hand-out was not).
      if (this.owner.listening && this.handedOut) {
        this.owner.emit(ofLock({ type: 'released', key: this.key, name: this.name, ...(this.keys && { keys: this.keys }), fencingToken: this.fencingToken, heldMs: this.owner.clock.now() - this.handedOutAt, unconfirmed: true, at: Date.now() }, this));
      }
    }
    this.endExtensions(new RedisLockError(`Lock ${quoteKey(this.key)} was released while this extension waited for Redis, which answered neither; it is no longer held.`, { cause: error }));
    this.releaseFailed(release, error);
  }

  private endExtensions(error: Error): void {
    if (this.extensions === undefined) return;
    this.extensionsEndedBy = error;
    for (const ended of this.extensions) ended(error);
    this.extensions.clear();
  }

  private releaseFailed(release: ReleaseInFlight, error: unknown): void {
    if (this.releasing === release) this.releasing = undefined;
    release.failed(error, this.releaseShared);
  }

  /** The release in flight has its answer (or failed for want of one): no longer bounded. */
  private answered(release: ReleaseInFlight): void {
    release.answered = true;
    this.owner.sweeper.untrack(this);
    if (!release.wasHeld) this.owner.releasingLost?.(this, false);
  }

  private releasedInRedis(wasHeld: boolean, reply: ReleaseReply): void {
    if (!wasHeld) return;
    if (reply.released) {
      this.state = 'released';
      this.owner.forget(this);
      if (this.owner.listening && this.handedOut) {
        this.owner.emit(ofLock({ type: 'released', key: this.key, name: this.name, ...(this.keys && { keys: this.keys }), fencingToken: this.fencingToken, heldMs: this.owner.clock.now() - this.handedOutAt, at: Date.now() }, this));
      }
      this.endedByRelease();
    } else {
      // Taken or expired between two renewals; the work is over, but say so.
      this.lose('refused');
    }
  }

  private lose(reason: LockLostReason, refusal?: RedisLockError): void {
    if (this.state !== 'held') return;
    this.state = 'lost';
    this.stopRenewing();
    const error = new LockLostError(this.key, this.fencingToken, reason, this.autoRenew, refusal, reason === 'expired' ? this.refusedForNow() : undefined);
    this.owner.forget(this);
    // Told outside any call chain, as the deadline sweeper tells it: a loss noticed by another
    // chain (a `held` read after a stall) must not hand that chain to the code the signal wakes.
    const controller = (this.controller ??= new AbortController());
    const tell = (): void => {
      controller.abort(error);
      this.wholeLockLost?.(error);
      this.endExtensions(error);
      if (reason === 'expired' && this.releasing === undefined) {
        // We told the holder it lost the lock; if Redis still has it for us, let others in now.
        // Shutdown waits for it: closed under it, the connection would leave the key to its lease.
        this.owner.cleanUp(this.owner.releaseInRedis(this.names, this.token));
      }
      // Said once the signal has aborted (the `lost` event promises it). A lock the caller never
      // got (a handed-over lock given back unconfirmed) is lost quietly.
      if (this.handedOut) this.report(reason, error);
    };
    if (this.owner.outsideChain === undefined) tell();
    else this.owner.outsideChain(tell);
  }

  private report(reason: LockLostReason, error: LockLostError): void {
    if (reason === 'shutdown') {
      // A multi-key call still waiting for its other keys: its caller got nothing, and its wait rejects.
      if (this.keys === undefined) this.owner.logger.warn(`Lock ${quoteKey(this.key)} was still held at shutdown; releasing it.`);
      else if (this.inWholeLock && !WARNED_AT_SHUTDOWN.has(this.keys)) {
        // One line for the lock of keys, as its other warnings name it, not one a key.
        WARNED_AT_SHUTDOWN.add(this.keys);
        this.owner.logger.warn(`The lock of keys ${shownKeys(this.keys)} was still held at shutdown; releasing it.`);
      }
    } else if (this.keys !== undefined && !this.inWholeLock) {
      // No code ran under it: an acquire(keys) recovers within its wait (see `acquireAll`), a
      // tryAcquire(keys) gives up (see `tryAcquireAll`), which this key cannot tell apart: the
      // line says what each does. A refusal for good ends either with that refusal.
      const refusal = reason === 'refused' && error.cause instanceof Error ? error.cause.message.replace(/\.$/, '') : undefined;
      const then =
        refusal === undefined
          ? ` (${reason}); every key is given back, and the call takes them again within its wait (acquire(keys), using(keys), @Locked) or ends without the lock (tryAcquire(keys))`
          : `: Redis refused its renewal for good (${refusal}); every key is given back, and the call ends with that refusal`;
      this.owner.logger.warn(`Lock ${quoteKey(this.key)}, taken first for a multi-key call, was lost while the call took its other keys${then}.`);
    } else {
      // Without a watchdog nothing was renewing it: its own ttl ran out.
      const when = this.autoRenew ? 'lock lost during renewal' : 'lock lost';
      this.owner.logger.error(`${when}: ${quoteKey(this.key)}${this.fencingToken === undefined ? '' : ` (fencing token ${this.fencingToken})`}: ${error.message}`);
    }
    if (this.owner.listening) {
      this.owner.emit(ofLock({ type: 'lost', key: this.key, name: this.name, ...(this.keys && { keys: this.keys }), fencingToken: this.fencingToken, reason, heldMs: this.owner.clock.now() - this.handedOutAt, at: Date.now() }, this));
    }
  }

  /** `keepDeadline`: stays on the sweeper, whose `expire` then bounds a release's wait. */
  private stopRenewing(keepDeadline = false): void {
    if (!keepDeadline) this.owner.sweeper.untrack(this);
    this.cancelFirstRenewal();
    if (this.autoRenew) this.owner.scheduler.remove(this, this.renewInterval);
  }

  private cancelFirstRenewal(): void {
    if (this.firstRenewal === undefined) return;
    this.owner.sweeper.untrack(this.firstRenewal);
    this.firstRenewal = undefined;
  }

  /** The first renewal came due: renew until Redis confirms (see `renewBy`). */
  firstRenewalDue(): void {
    this.firstRenewal = undefined;
    this.renewSoon();
  }

  private reschedule(renewInterval: number): void {
    if (!this.autoRenew || this.state !== 'held') return;
    this.owner.scheduler.remove(this, this.renewInterval);
    this.renewInterval = renewInterval;
    this.owner.scheduler.add(this, renewInterval);
  }

  /** `answered`: checked once an `extend()` had Redis' answer, so a release came while it waited. */
  private assertHeld(answered = false): void {
    if (this.state === 'lost') throw this.signal.reason;
    if (this.state === 'released' || this.releasing !== undefined) {
      throw new RedisLockError(
        answered
          ? `Lock ${quoteKey(this.key)} was released while extend() waited for its answer: the extension no longer applies.`
          : `Lock ${quoteKey(this.key)} was released; acquire it again before extending it.`,
      );
    }
  }

  /** `await using lock = await locks.acquire(key)` releases the lock at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** What `JSON.stringify()` gives (a JSON logger handed the lock): see `LockSummary`. */
  toJSON(): LockSummary {
    return lockSummary(this);
  }

  /** What `console.log()` and `util.inspect()` print: the summary `toJSON()` gives. */
  [INSPECT](): LockSummary {
    return this.toJSON();
  }
}

/** When a handed-over lock's first renewal is due, as the deadline sweeper tracks it. */
class FirstRenewal implements Expiring {
  sweepIndex = -1;

  constructor(
    private readonly lock: HeldLock,
    readonly deadline: number,
  ) {}

  expire(): void {
    this.lock.firstRenewalDue();
  }
}

/** The watchdog's interval for a lease extended to `ttl`: a third of it. */
function renewIntervalOf(ttl: number): number {
  return Math.min(Math.max(1, Math.floor(ttl / 3)), MAX_TIMER_MS);
}
