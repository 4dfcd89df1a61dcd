import { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { SemaphoreLimitError } from '../../errors/semaphore-limit.error.js';
import type { LockEvent, LockNotAcquiredOutcome } from '../../interfaces/lock-event.interface.js';
import type { AnyLockOptions } from '../../interfaces/redis-lock-options.interface.js';
import type { LockRedisKeys } from '../keys/lock-key.js';
import { quoteKey } from '../keys/quote-key.js';
import { driftMargin, type LockTiming } from '../options/lock-options.js';
import type { Enqueue } from '../stores/lock-store.js';
import type { ReleaseWatch } from '../stores/redis/release-notifier.js';
import type { Clock } from '../time/clock.js';
import { settleWithin, TIMED_OUT } from '../time/settle-within.js';
import type { FairnessRule } from './fairness.js';
import { endedWithChain } from './wait-ends-with-chain.js';
import { FREED } from './grant-inbox.js';
import { HeldLock } from './held-lock.js';
import type { ReleaseWatcher } from './lock-backend.js';
import type { LockKind } from './lock-kind.js';
import { waitForTurn } from './wait-for-turn.js';
import { LAST_ATTEMPT_GRACE_MS, WAITER_LEASE_MS, WAITER_REFRESH_MS } from './waiter-timing.js';
import { endedByShutdown } from './ended-by-shutdown.js';
import { callSince, partOf } from './call-since.js';
import { holdsForeignData, storeFailure } from './store-failure.js';
import { ofCall } from './lock-diagnostics.js';

const noop = (): void => undefined;

/** The reply of a call's latest acquire attempt. */
export interface SentAttempt {
  reply?: Promise<unknown>;
}

/** An attempt whose reply came after the lease it would have started had run out locally. */
export const STALE_REPLY: unique symbol = Symbol('stale reply');

/** What one acquire script call came to (see `AcquisitionHost.attempt`). */
export type AttemptOutcome = HeldLock | { pttl: number; fence?: number; joined?: boolean } | typeof TIMED_OUT | typeof STALE_REPLY;

/** What an acquisition needs of the lock engine that runs it (`LockManager`). */
export interface AcquisitionHost {
  readonly clock: Clock;
  /** Wakes waiters on release messages; absent where they poll (quorum mode). */
  readonly watcher: ReleaseWatcher | undefined;
  /** Whether a grant must be confirmed by an acquire call before it is handed out (see `LockStore.confirmsGrants`). */
  readonly confirmsGrants: boolean;
  /** Whether anyone listens to lock events (emitting costs otherwise). */
  readonly listening: boolean;
  /** Whether the engine is shutting down. */
  readonly closed: boolean;
  /** How often the store's connection was reset so far (see `LockStore.connectionResets`); undefined where nothing is sent again. */
  connectionResets(): number | undefined;
  /** Aborted at shutdown: ends every wait with its reason. */
  readonly shutdown: AbortSignal;
  emit(event: LockEvent): void;
  /**
   * One acquire script call (see `LockManager.attempt`). `enqueue` says what the store does
   * with the caller when the lock is busy (see `Enqueue`).
   */
  attempt(key: string, names: LockRedisKeys, token: string, timing: LockTiming, enqueue: Enqueue, bound: number, signal: AbortSignal | undefined, startedAt: number, sent: SentAttempt): Promise<AttemptOutcome>;
  /** Records a lock Redis gave `token`, on a lease of `lease` ms counted from `leaseStart`. */
  hold(key: string, names: LockRedisKeys, token: string, fencingToken: number, timing: LockTiming, leaseStart: number, lease: number): HeldLock;
  /** Hands a held lock to the caller (and tells the listeners). */
  acquired(lock: HeldLock, calledAt: number, options: AnyLockOptions | undefined, afterWaiting: boolean, call?: object): HeldLock;
  /** Leaves the queue and gives back what the call's attempts may hold (see `LockManager.leave`). */
  leave(names: LockRedisKeys, token: string, timing: LockTiming, after?: Promise<unknown>): void;
  /** A holder's release of this process on `channel` not yet answered, while anyone listens (see `ReleasesOnTheirWay`). */
  releaseOnItsWay(channel: string): Promise<unknown> | undefined;
  /** A fresh owner token; `since` (ms since the epoch): when the call began, its holder's `since` (now by default). */
  newToken(options: AnyLockOptions | undefined, since?: number): string;
  /** Work shutdown must wait for. */
  cleanUp(work: Promise<unknown>): void;
  warnPolling(key: string, waitedMs: number): void;
  noAnswer(key: string, bound: number): RedisLockError;
  /** The error that ends the call for `error`, a refusal asking again cannot change (see `lastingRefusal`); undefined for any other. */
  refusedForGood(error: unknown, key: string): RedisLockError | undefined;
}

/**
 * The wait of a call made within a chain of held locks (a job run's, a leader's term): `signal`
 * aborts with the caller's own, when the chain's calls are told to stop at its shutdown phase
 * (`LockManager.interruptCallsWithin`), or when a lock of the chain ends while it waits (see
 * `endWaitWithChain`); `done` once the call has ended.
 */
export interface ChainWait {
  readonly signal: AbortSignal;
  done(): void;
}

/**
 * One `acquire()` call that may wait: the protocol's steps as methods, in the order docs/redis-data.md
 * tells them: attempt; when the lock is busy, subscribe to its release messages
 * (then attempt again, so that a release in between is not missed; a process subscribed already
 * watches before the attempt and needs no second one); wait for a turn; take a grant
 * a release handed over; give up (leave the queue) on timeout, abort, error or shutdown. What is
 * taken (`LockKind`) and who goes first (`FairnessRule`) are handed in.
 */
export class Acquisition {
  private readonly signal: AbortSignal | undefined;
  private readonly name: string | undefined;
  /** The keys of the multi-key lock this key is taken for (see `LockEvent.keys`). */
  private readonly keys: readonly string[] | undefined;
  private readonly calledAt: number;
  /** When the call began, in ms since the epoch: every token of the call records it as its holder's `since`. */
  private readonly since: number;
  private readonly waitUntil: number;
  /** Whether the call waits at all (a waitTimeout above 0). */
  private readonly waits: boolean;
  /** One token for the whole call (it is also the caller's place in the queue), until a grant is given back. */
  private token: string;
  private names: LockRedisKeys;
  /** The reply of the latest attempt, settled or not: a leave must go out after it. */
  private readonly sent: SentAttempt = {};
  /** Whether a `waiting` event went out: `afterWaiting` must pair with one someone saw. */
  private announced = false;
  private watch: ReleaseWatch | undefined;
  private lastError: unknown;
  /**
   * Whether an attempt ended without its reply (timeout, abort, error): it may still have taken
   * the lock in Redis, so the call must leave even if it never queued.
   */
  private uncertain = false;
  /** When the latest attempt Redis answered was sent: it bounds when a later grant can have started. */
  private lastAttemptAt: number;
  /** The holder's lease left, from the latest busy reply. */
  private busyFor: number | undefined;
  /** Whether an attempt queued this token already (or may have: its reply never came). */
  private queued = false;
  /**
   * Whether grants must be confirmed by an attempt before they are handed out: a busy reply
   * queued this token again (`joined`), so its place was lost, and a grant it hears of may have
   * been made before the loss. When Redis restarted empty, the fencing counter restarted too, and
   * cannot show such a grant stale: its lease, counted from a later attempt, would be a lie.
   */
  private confirmGrants = false;
  /** Attempts made so far, less one (the backoff of a waiter without release messages grows with it). */
  private round = -1;
  /**
   * Races for a freed lock this waiter lost, and polls that found it busy (see `FairnessRule`):
   * a poll counts too, for a lock that is never freed while it waits (readers that overlap, one
   * after another, let nobody publish that the read lock is free).
   */
  private lostRaces = 0;
  /** Whether the latest wait ended on a release that freed the lock (barging): the next attempt races for it. */
  private racing = false;
  /** Whether the latest wait ended on its refresh timer, with no message: the next attempt polls. */
  private polled = false;
  /** The latest attempt's: how long its reply is waited for, when it was sent, whether it raced for a freed lock. */
  private bound = 0;
  private startedAt = 0;
  private racingNow = false;
  private pollingNow = false;
  private queuingNow = false;
  /** Connection resets when the latest attempt was sent: a reply across a reset may be a resend's. */
  private resetsAtSend: number | undefined;
  /** Called once when the call ends (see `run`). */
  private onEnd: () => void = noop;

  constructor(
    private readonly host: AcquisitionHost,
    private readonly key: string,
    private readonly timing: LockTiming,
    private readonly options: AnyLockOptions | undefined,
    private readonly kind: LockKind,
    private readonly fairness: FairnessRule,
    /** When the call began, if before this acquisition (it waited for a parked lock's answer first): its waitTimeout counts from then. */
    calledAt?: number,
    /** A call made within a chain of held locks: what ends its wait beside the caller's signal (see `ChainWait`). */
    private readonly within?: ChainWait,
  ) {
    this.signal = within?.signal ?? options?.signal;
    this.name = options?.name;
    this.keys = partOf(options);
    this.lastAttemptAt = host.clock.now();
    this.calledAt = calledAt ?? this.lastAttemptAt;
    this.waitUntil = this.calledAt + timing.waitTimeout;
    // A call that began earlier (a multi-key lock's later key) may have no wait left: one try.
    this.waits = this.waitUntil > this.lastAttemptAt;
    // Every token of the call records when it began: a multi-key call's later key says so in its
    // options; a call that waited for a parked answer first began that long ago.
    this.since = callSince(options) ?? Date.now() - (this.lastAttemptAt - this.calledAt);
    this.token = host.newToken(options, this.since);
    this.names = kind.names(this.token);
  }

  /**
   * Runs the call to its end: the lock, or the error it gave up with; `onEnd` runs once either
   * is known. The first attempt is a plain `then`, not a step of an async loop: most calls find
   * the lock free, and an async frame suspended at an `await` costs its promises (more under an
   * AsyncLocalStorage) and keeps all its locals. Only a busy lock goes on to `waitOn`.
   */
  run(onEnd: () => void): Promise<HeldLock> {
    this.onEnd = onEnd;
    return this.send().then(
      (outcome) => this.firstAnswered(outcome),
      (error: unknown) => this.firstFailed(error),
    );
  }

  /**
   * `run` for a caller that only needs callbacks (every `@Locked` call): a lock the first
   * attempt took goes to `onLock` from that attempt's own `then`, one promise and one microtask
   * less than a `then` of the caller's. Neither callback may throw.
   */
  runThen(onEnd: () => void, onLock: (lock: HeldLock) => void, onFailed: (error: unknown) => void): void {
    this.onEnd = onEnd;
    this.send().then(
      (outcome) => {
        let next: HeldLock | Promise<HeldLock>;
        try {
          next = this.firstAnswered(outcome);
        } catch (error) {
          onFailed(error);
          return;
        }
        if (next instanceof HeldLock) onLock(next);
        else next.then(onLock, onFailed);
      },
      (error: unknown) => {
        let next: Promise<HeldLock>;
        try {
          next = this.firstFailed(error);
        } catch (fatal) {
          onFailed(fatal);
          return;
        }
        next.then(onLock, onFailed);
      },
    );
  }

  /** The first attempt's reply: the lock, or the rest of the call when the lock was busy. */
  private firstAnswered(outcome: AttemptOutcome): HeldLock | Promise<HeldLock> {
    let lock: HeldLock | undefined;
    try {
      lock = this.answered(outcome);
    } catch (error) {
      throw this.end(error);
    }
    if (lock === undefined) return this.waitOn();
    this.took(lock);
    this.ended();
    return lock;
  }

  /** The first attempt got no reply: the rest of the call, unless the error ends it. */
  private firstFailed(error: unknown): Promise<HeldLock> {
    try {
      this.failed(error);
    } catch (fatal) {
      throw this.end(fatal);
    }
    return this.waitOn();
  }

  /** After a first attempt that did not get the lock: wait, attempt again, until the lock or the end. */
  private async waitOn(): Promise<HeldLock> {
    try {
      for (;;) {
        const left = this.timeLeft();
        this.announceWaiting();
        if (!(await this.subscribe(left))) {
          const granted = await this.waitForTurn(left);
          if (granted !== undefined) return this.took(granted);
        }
        const lock = await this.attempt();
        if (lock !== undefined) return this.took(lock);
      }
    } catch (error) {
      throw this.giveUp(error);
    } finally {
      this.ended();
    }
  }

  /** Ends the call after its first attempt with `error`. */
  private end(error: unknown): unknown {
    try {
      return this.giveUp(error);
    } finally {
      this.ended();
    }
  }

  /**
   * The call is over: stops watching (a first attempt watches ahead when this process is
   * subscribed already; a watch left open would keep the channel subscribed for good and take
   * a freed-lock wake meant for a waiter), then `onEnd`.
   */
  private ended(): void {
    this.watch?.close();
    this.within?.done();
    this.onEnd();
  }

  /**
   * The call got the lock: under barging, a waiter that was woken lets the next waiter of this
   * process ask again (see `FairnessRule.passesOn`); a first attempt was woken by nobody.
   */
  private took(lock: HeldLock): HeldLock {
    lock.parks = this.fairness.parks;
    if (this.fairness.passesOn && this.round > 0) this.watch?.passOn();
    return lock;
  }

  /**
   * Watches the lock's release messages before the attempt when this process is subscribed to
   * them already (another waiter on the key; always in memory): a release after the attempt then
   * reaches this waiter, which needs no second attempt after subscribing (see `subscribe`).
   */
  private watchAhead(): void {
    const { watcher } = this.host;
    if (this.watch !== undefined || !this.waits || watcher === undefined || this.lastError !== undefined) return;
    if (watcher.subscribed(this.names.released)) this.openWatch(watcher);
  }

  /** Watches this token's grants (and, barging, the lock's freed messages). */
  private openWatch(watcher: ReleaseWatcher): ReleaseWatch {
    const watch = (this.watch = watcher.watch(this.names.released, this.token, this.fairness.name === 'barging'));
    if (this.confirmGrants) watch.wakeOnEveryGrant();
    return watch;
  }

  /** One acquire script call: the lock, or undefined after a busy reply or an error worth retrying. */
  private attempt(): Promise<HeldLock | undefined> {
    return this.send().then(
      (outcome) => this.answered(outcome),
      (error: unknown) => this.failed(error),
    );
  }

  /** Sends one acquire script call; what it came to goes to `answered` or `failed`. */
  private send(): Promise<AttemptOutcome> {
    const { host, timing } = this;
    this.round++;
    this.watchAhead();
    this.busyFor = undefined;
    // Every attempt gets at least the grace a late answer deserves: a short waitTimeout must not
    // fail a free lock that a call without waiting (the grace alone) would take.
    const bound = this.waits ? Math.max(this.waitUntil - host.clock.now(), LAST_ATTEMPT_GRACE_MS) : LAST_ATTEMPT_GRACE_MS;
    const startedAt = host.clock.now();
    const enqueue = this.waits && this.fairness.enqueue(this.lostRaces);
    this.bound = bound;
    this.startedAt = startedAt;
    this.racingNow = this.racing;
    this.racing = false;
    this.pollingNow = this.polled;
    this.polled = false;
    this.queuingNow = enqueue === true;
    this.resetsAtSend = host.connectionResets();
    try {
      return host.attempt(this.key, this.names, this.token, timing, enqueue, bound, this.signal, startedAt, this.sent);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** What the latest attempt's reply means: the lock, or undefined (busy, or an error worth retrying). */
  private answered(outcome: AttemptOutcome): HeldLock | undefined {
    const { host, timing, startedAt } = this;
    try {
      if (outcome === TIMED_OUT) throw host.noAnswer(this.key, this.bound);
      if (outcome instanceof HeldLock) return host.acquired(outcome, this.calledAt, this.options, this.announced, this);
      if (outcome === STALE_REPLY) {
        this.uncertain = true;
        this.lastError = new RedisLockError(`Redis granted lock ${quoteKey(this.key)} but its reply came after the lease (${timing.ttl} ms) had run out here; it was given back.`);
        // Given back under this token: go on under a new one, as after an unconfirmed grant.
        this.renewToken();
      } else {
        this.busyFor = outcome.pttl;
        // A reply across a connection reset may be the answer to a resend of the attempt (ioredis
        // sends unanswered commands again), whose first run said what the resend does not: that
        // it queued the caller anew.
        const resent = this.resetsAtSend !== undefined && this.host.connectionResets() !== this.resetsAtSend;
        // Each is a queuing of its own: a first attempt resent after its first run had queued
        // the caller (and a grant took it out) may be queued anew by the resend.
        if (resent && this.queuingNow) this.queuedAgain();
        if (outcome.joined === true) this.queuedAgain();
        if (this.racingNow || this.pollingNow) this.lostRaces++;
        // A grant to this caller that the busy reply proves expired must never be handed out.
        // (A grant takes its waiter out of the queue, so this attempt also queued the caller
        // anew, and `joined` has every later grant confirmed too: the counter is the second check.)
        if (outcome.fence !== undefined) this.watch?.staleThrough(outcome.fence);
        this.lastError = undefined;
        // Only an attempt Redis answered bounds when a later grant can have started.
        this.lastAttemptAt = startedAt;
      }
    } catch (error) {
      return this.failed(error);
    }
    return undefined;
  }

  /** The latest attempt ended without a reply: undefined to try again, or throws what ends the call. */
  private failed(error: unknown): undefined {
    this.uncertain = true;
    // Every later attempt would be refused alike (a closed client, a command refused for good).
    const lasting = this.host.closed || error === this.signal?.reason ? undefined : this.host.refusedForGood(error, this.key);
    if (lasting !== undefined) throw lasting;
    // It may have run, and queued the caller anew: its reply, which would have said so, is lost.
    if (this.queuingNow) this.queuedAgain();
    if ((this.signal?.aborted && error === this.signal.reason) || this.host.closed || error instanceof SemaphoreLimitError) throw error;
    // Data of another kind under the lock's keys: every later attempt would be refused alike.
    if (holdsForeignData(error)) throw storeFailure(error, `Lock ${quoteKey(this.key)} could not be acquired`);
    this.lastError = error;
    return undefined;
  }

  /** The time left to wait; past it, the call fails. */
  private timeLeft(): number {
    const now = this.host.clock.now();
    const left = this.waitUntil - now;
    if (left <= 0) throw new LockNotAcquiredError(this.key, now - this.calledAt, this.lastError === undefined ? undefined : { cause: this.lastError }, this.timing.waitTimeout);
    return left;
  }

  private announceWaiting(): void {
    if (this.announced || this.lastError !== undefined || !this.host.listening) return;
    this.announced = true;
    this.host.emit(ofCall({ type: 'waiting', key: this.key, name: this.name, ...(this.keys && { keys: this.keys }), at: Date.now() }, this));
  }

  /**
   * Subscribes to the lock's release messages once the lock was found busy; true when it did,
   * and the call must then attempt again before it waits, so that a release in between cannot
   * be missed. A waiter that watched before its attempt (`watchAhead`) cannot miss one.
   */
  private async subscribe(left: number): Promise<boolean> {
    const { host } = this;
    if (this.watch !== undefined || host.watcher === undefined || this.lastError !== undefined) return false;
    const watch = this.openWatch(host.watcher);
    // Never hang on a subscription (a full maxclients, an unreachable node): past one refresh
    // the waiter polls, which keeps its place in the queue and still finds the lock.
    const bound = Math.min(left, WAITER_REFRESH_MS);
    // A wait cut short by the caller's own waitTimeout says nothing of the subscription: the
    // warning is for one that took a whole refresh (docs/locks.md: 250 ms).
    if ((await settleWithin(watch.ready, bound, [this.signal, host.shutdown], host.clock)) === TIMED_OUT && bound === WAITER_REFRESH_MS) host.warnPolling(this.key, bound);
    return true;
  }

  /** Sleeps until a release message, the holder's lease or the next refresh; the lock when a release handed it over. */
  private async waitForTurn(left: number): Promise<HeldLock | undefined> {
    const { host } = this;
    const refresh = Math.min(left, WAITER_REFRESH_MS, Math.floor(this.timing.ttl / 3));
    const granted = await waitForTurn(this.watch, this.round, this.busyFor, refresh, this.signal, host.shutdown, host.clock);
    if (granted === FREED) {
      this.racing = true;
      return undefined;
    }
    if (granted === undefined) this.polled = true;
    // A store that confirms grants, or a waiter whose place was lost: the grant only wakes the
    // waiter, whose next attempt takes it (if it still stands).
    if (granted === undefined || host.confirmsGrants || this.confirmGrants) return undefined;
    const releasing = this.releaseHere();
    if (releasing !== undefined) await releasing;
    return this.takeGrant(granted);
  }

  /**
   * A grant from a holder of this process whose release's reply is still on its way (its message
   * came first, on another connection): the wait for that reply, so that the holder's `released`
   * is told before this `acquired` (see `ReleasesOnTheirWay`). At most until the grant's lease
   * is due for renewal (a third of it from the last attempt, as `takeGrant` counts it): the lock
   * is then handed out as without the wait. Shutdown or the call's signal (its caller's, or its
   * chain's) ends the wait, as every other wait of the call: an aborted call must not be handed a
   * lock; `giveUp` gives the grant back.
   */
  private releaseHere(): Promise<unknown> | undefined {
    const { host } = this;
    const before = host.listening ? host.releaseOnItsWay(this.names.released) : undefined;
    if (before === undefined) return undefined;
    const lease = Math.min(this.timing.ttl, WAITER_LEASE_MS);
    return settleWithin(before, Math.max(0, this.lastAttemptAt + lease / 3 - host.clock.now()), [this.signal, host.shutdown], host.clock);
  }

  /**
   * Holds the lock a release handed to this waiter with `fencingToken`. The release ran after
   * our last attempt: the (shortened) grant lease counts from that attempt, and is renewed to
   * the full ttl a third of the way into it, unless the holder gave the lock back by then (a
   * short critical section costs no renewal). Undefined when that lease, counted so, has run
   * out already: the next attempt, under the same token, confirms the grant.
   */
  private async takeGrant(fencingToken: number): Promise<HeldLock | undefined> {
    const { host, timing } = this;
    const lease = Math.min(timing.ttl, WAITER_LEASE_MS);
    // Too late for a renewal (the last attempt was answered a second or more after it was sent,
    // or this process stalled), yet the grant started at the release and may well stand in
    // Redis: an attempt takes it on the full ttl if so, and this waiter keeps its place. Given
    // back, it went to the next waiter, and this one was queued again behind it.
    if (this.lastAttemptAt + lease - driftMargin(lease) <= host.clock.now()) return undefined;
    const lock = host.hold(this.key, this.names, this.token, fencingToken, timing, this.lastAttemptAt, lease);
    if (lock.deadline - host.clock.now() > lease / 2) {
      // Never before the caller's code has started (the sweeper's timer fires later): the new holder runs first.
      lock.renewBy(this.lastAttemptAt + lease / 3);
      return host.acquired(lock, this.calledAt, this.options, this.announced, this);
    }
    // This process was too slow to trust the short lease: renew before handing it out, within
    // what is left of that lease.
    lock.name = this.name;
    lock.keys = this.keys;
    let renewed: boolean | undefined | typeof TIMED_OUT = TIMED_OUT;
    try {
      renewed = await settleWithin(lock.renewBeforeHandover(), Math.max(0, lock.deadline - host.clock.now()), [this.signal, host.shutdown], host.clock);
      if (renewed === true) return host.acquired(lock, this.calledAt, this.options, this.announced, this);
    } catch (error) {
      if ((this.signal?.aborted && error === this.signal.reason) || host.closed) {
        host.cleanUp(lock.release());
        throw error;
      }
      this.lastError = error;
    }
    if (renewed === TIMED_OUT || renewed === undefined) {
      // Unanswered in time (or failed), the grant may well stand in Redis (the renewal ran, or the
      // release's lease still counts): the next attempt, at once and under the same token, takes
      // it if so, and this waiter keeps its place. Given back, it went to the waiter behind, as
      // 8ab9e79's did.
      lock.abandon();
      return undefined;
    }
    // Refused (or lost by the time its answer came): give the lock back (owner-checked) rather
    // than hold it blind, and go on under a new token: a release and a later attempt of one token
    // could reach Redis in the wrong order (a NOSCRIPT retry resends a script behind later
    // commands), and the release would then delete the lock the attempt had just taken.
    host.cleanUp(lock.release());
    this.renewToken();
    return undefined;
  }

  /**
   * An attempt queued the caller (its reply said so), or may have (no reply, or one across a
   * connection reset): if an earlier one had queued it already, its place was lost, and grants
   * are confirmed from now on (see `confirmGrants`).
   */
  private queuedAgain(): void {
    if (this.queued && !this.confirmGrants) {
      this.confirmGrants = true;
      this.watch?.wakeOnEveryGrant();
    }
    this.queued = true;
  }

  /** Goes on under a new token (and a new subscription), after giving back what the old one took. */
  private renewToken(): void {
    this.watch?.close();
    this.watch = undefined;
    this.token = this.host.newToken(this.options, this.since);
    this.names = this.kind.names(this.token);
    this.queued = false;
    this.confirmGrants = false;
  }

  /**
   * Ends the call with `error`: a waiter leaves the queue, passing on a lock handed to it
   * meanwhile; the leave also gives back a lock an attempt took after we stopped waiting for
   * its reply.
   */
  private giveUp(error: unknown): unknown {
    const { host } = this;
    // The caller's own: a wait its chain's shutdown phase ended (see ChainWait) ends as shutdown's does.
    const signal = this.options?.signal;
    if (this.waits || this.uncertain) host.leave(this.names, this.token, this.timing, this.uncertain ? this.sent.reply : undefined);
    // A barging waiter of this process that gives up may have been the one a freed-lock message
    // woke, or the one that said in Redis that the process waits (`wanted`): its siblings on the
    // key would hear of no later release. One of them attempts now (after the leave, on the same
    // connection), and says it waits again if it loses.
    if (this.fairness.passesOn) this.watch?.passOn();
    if (host.listening) {
      const outcome: LockNotAcquiredOutcome =
        signal?.aborted && error === signal.reason ? 'aborted' : !(error instanceof LockNotAcquiredError) || this.lastError !== undefined ? 'error' : this.waits ? 'timeout' : 'busy';
      // A call whose wait was used up before this acquisition began (a multi-key call's later key,
      // a call that waited for a parked lock's answer first) had one try left: it timed out. A wait
      // a lock of its chain ended (lost, stepped down from) was told to stop, as by its own signal.
      const told = endedWithChain(this.within?.signal, error) ? 'aborted' : outcome === 'busy' && this.timing.waitTimeout > 0 ? 'timeout' : outcome;
      host.emit(ofCall({ type: 'not-acquired', key: this.key, name: this.name, ...(this.keys && { keys: this.keys }), waitedMs: host.clock.now() - this.calledAt, outcome: told, afterWaiting: this.announced, at: Date.now() }, this));
    }
    return endedByShutdown(host.closed || this.within?.signal.aborted === true, this.key, host.clock.now() - this.calledAt, error, signal);
  }
}
