import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import { map, Subject, type Observable } from 'rxjs';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { RedisUnavailableError } from '../../errors/redis-unavailable.error.js';
import { LockLostError } from '../../errors/lock-lost.error.js';
import { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import { shutDownRefusal, shutdownReason } from '../../errors/shutdown-reason.js';
import { lastingRefusal, storeFailure } from './store-failure.js';
import { clientsClosed } from './clients-closed.js';
import { endedByShutdown } from './ended-by-shutdown.js';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { LockEvent } from '../../interfaces/lock-event.interface.js';
import type { LockInspection } from '../../interfaces/lock-inspection.interface.js';
import { semaphoreInspection } from '../semaphore/semaphore-inspect.js';
import type { Lock } from '../../interfaces/lock.interface.js';
import type { AnyLockOptions } from '../../interfaces/redis-lock-options.interface.js';
import { systemClock, type Clock } from '../time/clock.js';
import { DeadlineSweeper } from './deadline-sweeper.js';
import { leaseLive } from './lease-deadline.js';
import { followSignal } from './follow-signal.js';
import { endWaitWithChain } from './wait-ends-with-chain.js';
import { diagnosticsListening, ofCall, ofLock, publishDiagnostics } from './lock-diagnostics.js';
import { HeldLock, type LockOwner } from './held-lock.js';
import { checkLockKey, lockRedisKeys, type LockRedisKeys } from '../keys/lock-key.js';
import { checkKeyOf, describeCall, namingCall, type LockCall } from './call-errors.js';
import { leaseLeft } from './lease-left.js';
import { quoteKey } from '../keys/quote-key.js';
import { shownKeys } from '../keys/shown-keys.js';
import { checkLockNaming, HolderRecorder, parseHolder } from './holder.js';
import { ReplyWaits } from './reply-waits.js';
import type { LockLogger } from './lock-logger.js';
import { CALL_OPTION_NAMES, resolveLockOptions, type CallDefaults, type LockTiming, type ResolvedModuleOptions } from '../options/lock-options.js';
import type { ReplicaWait } from '../options/wait-for-replicas.js';
import type { AcquireReply, ReleaseReply } from '../stores/lock-store.js';
import type { RedisClient } from '../stores/redis/drivers/redis-client.js';
import type { Enqueue, LockStore } from '../stores/lock-store.js';
import type { LockRunner } from './locked-call.js';
import { ownerToken } from './owner-token.js';
import { matchFencing, ReentrantLock } from './reentrant-lock.js';
import type { LockBackend, ReleaseWatcher } from './lock-backend.js';
import { RenewalScheduler } from './renewal-scheduler.js';
import { settleWithin, TIMED_OUT } from '../time/settle-within.js';
import { isUnansweredRead, unansweredRead } from './unanswered.js';
import { Acquisition, type ChainWait, STALE_REPLY, type AcquisitionHost, type AttemptOutcome, type SentAttempt } from './acquisition.js';
import { BARGING, type FairnessRule } from './fairness.js';
import { LockParking, type ParkingHost } from './lock-parking.js';
import { resolveFairness } from '../options/fairness-option.js';
import { lockKind } from './lock-kind.js';
import { LAST_ATTEMPT_GRACE_MS, WAITER_LEASE_MS, WAITER_REFRESH_MS } from './waiter-timing.js';
import { SemaphoreLimitError } from '../../errors/semaphore-limit.error.js';
import { UnsupportedLockKindError } from '../../errors/unsupported-lock-kind.error.js';
import { isSemaphore } from '../semaphore/semaphore-keys.js';
import { resolveSemaphoreOptions, type SemaphoreRequest } from '../semaphore/semaphore-options.js';
import type { SemaphoreStore } from '../semaphore/semaphore-store.js';
import type { MultiKeyLock } from '../../interfaces/lock.interface.js';
import { acquireAll, tryAcquireAll } from '../multi-key/acquire-all.js';
import { canonicalKeys } from '../multi-key/canonical-keys.js';
import { MultiLock } from '../multi-key/multi-key-lock.js';
import { shownLock } from '../multi-key/shown-lock.js';
import { LockUpgradeError } from '../../errors/lock-upgrade.error.js';
import { isRead } from '../rwlock/read-keys.js';
import { isReadMode } from '../rwlock/lock-mode.js';
import type { ReadStore } from '../rwlock/read-store.js';
import { callSince, partOf } from './call-since.js';
import { unreadableOption } from '../options/unreadable-option.js';
import { refuseGenerator } from './generator-result.js';
import { UnconfirmedReleases } from './unconfirmed-releases.js';
import { ReleasesOnTheirWay } from './releases-on-their-way.js';
import { thrownStack, thrownText } from './thrown-text.js';
import { setImmediate } from '../time/real-timers.js';

export { WAITER_LEASE_MS, WAITER_REFRESH_MS } from './waiter-timing.js';

const POLLING_WARNING_MS = 10_000;

const noop = (): void => undefined;

/** How long an acquire's first attempt waits for Redis to answer (see `Acquisition`): its waitTimeout, and at least the grace of a call that does not wait. */
const acquireBound = (timing: LockTiming): number => Math.max(timing.waitTimeout, LAST_ATTEMPT_GRACE_MS);

/** Whether a call names several keys (a multi-key lock). */
const isKeyList = (key: string | readonly string[]): key is readonly string[] => Array.isArray(key);

/** The parts of a call's options that do not change between calls. */
interface ResolvedCallOptions {
  timing: LockTiming;
  semaphore: SemaphoreRequest | undefined;
  read: boolean;
  fairness: FairnessRule;
}

/**
 * The lock engine, free of Nest: acquisition, waiting, reentrancy, release and shutdown over
 * one Redis client. `LockService` exposes it to Nest applications.
 */
export class LockManager implements LockOwner, LockRunner {
  readonly store: LockStore;
  readonly scheduler: RenewalScheduler;
  readonly sweeper: DeadlineSweeper;
  /** The backend's clock (the system's, or a test's manual one): every timer runs on it. */
  readonly clock: Clock;
  /** Release messages wake waiters (one node only; a quorum's waiters poll). */
  private readonly notifier?: ReleaseWatcher;
  private readonly events = new Subject<LockEvent>();
  /**
   * The locks the current async call chain holds, innermost last: each key's own, a nested
   * call's handle on a key the chain held already (so that current() inside it names that key,
   * not whichever key was taken last), and a multi-key call's lock after the parts it took (it
   * takes none when every key re-entered), which is what current() names inside that call.
   */
  private readonly chain = new AsyncLocalStorage<readonly (HeldLock | MultiLock | ReentrantLock)[]>();
  private readonly heldLocks = new Set<HeldLock>();
  private readonly pendingCleanups = new Set<Promise<unknown>>();
  /** acquire() and tryAcquire() calls still running: shutdown waits for them to settle. */
  private acquiring = 0;
  private acquiringSettled?: () => void;
  private readonly defaults: CallDefaults;
  private closed = false;
  private readonly unconfirmed: UnconfirmedReleases;
  private stopping?: Promise<void>;
  /** Ends every wait at shutdown. */
  private readonly shutdown = new AbortController();
  /** The replies acquire attempts wait for. */
  private readonly replyWaits: ReplyWaits;
  private readonly holder: HolderRecorder;
  /** Hot barging mutexes kept in this process between a release and the next acquire (absent where grants need confirming). */
  private readonly parking?: LockParking;

  constructor(
    private readonly options: ResolvedModuleOptions,
    private readonly backend: LockBackend,
    readonly logger: LockLogger,
  ) {
    this.store = backend.store;
    this.notifier = backend.notifier;
    this.clock = backend.clock ?? systemClock;
    this.sweeper = new DeadlineSweeper(this.clock, (fn) => this.outsideChain(fn));
    this.replyWaits = new ReplyWaits(this.sweeper, this.clock);
    this.scheduler = new RenewalScheduler(this.store, logger, this.clock, (fn) => this.outsideChain(fn), () => backend.unanswered?.(), () => this.clientsClosed());
    this.unconfirmed = new UnconfirmedReleases({
      clock: this.clock,
      resend: (names, token) => this.releaseInRedis(names, token),
      outside: (fn) => this.outsideChain(fn),
      closed: () => this.closed && this.clientsClosed(),
      refusedForGood: (error) => this.refusedForGood(error),
    });
    const { ttl, renewInterval, waitTimeout, autoRenew, fenceRetention } = options;
    this.defaults = { ttl, renewInterval, waitTimeout, autoRenew, fenceRetention, replicaWait: options.waitForReplicas?.timeout };
    // Every waiter listens to it; any number may wait.
    setMaxListeners(0, this.shutdown.signal);
    this.holder = new HolderRecorder(options.instanceName);
    // `waitForReplicas`: a lock must be confirmed by an acquire that waits for the replicas.
    if (this.store.barges === true && this.store.confirmsGrants !== true) this.parking = new LockParking(this.parkingHost);
    if (options.fairness === 'barging' && !(this.store.barges === true && this.notifier !== undefined)) {
      throw new InvalidLockOptionsError('fairness', 'barging', `'fifo' in quorum mode (several independent Redis masters): its waiters have no release messages to race on`);
    }
  }

  /** The Redis clients this manager speaks to (several in quorum mode, none in memory). */
  get clients(): readonly RedisClient[] {
    return this.backend.clients;
  }

  get keyPrefix(): string {
    return this.options.keyPrefix;
  }

  /** The module's `waitForReplicas`, when every acquisition waits for replicas (the health check reads it). */
  get replicaWait(): ReplicaWait | undefined {
    return this.options.waitForReplicas;
  }

  /** Each subscription gets an object of its own: one subscriber changing its event must not change another's. */
  get events$(): Observable<LockEvent> {
    return this.events.pipe(map((event) => ({ ...event })));
  }

  get listening(): boolean {
    return this.events.observed || diagnosticsListening();
  }

  get fenceRetention(): number {
    return this.options.fenceRetention;
  }

  emit(event: LockEvent): void {
    try {
      this.events.next(event);
    } catch (error) {
      // Only under RxJS' `config.useDeprecatedSynchronousErrorHandling` does a subscriber's error
      // come out of `next()`: a listener's bug must not decide whether a lock is had.
      this.logger.error(`An events$ subscriber threw on a '${event.type}' event: ${thrownText(error)}`, thrownStack(error));
    }
    publishDiagnostics(event);
  }

  forget(lock: HeldLock): void {
    this.heldLocks.delete(lock);
    if (this.inCall.delete(lock) && this.inCall.size === 0) this.callsEnded?.();
  }

  /**
   * Held locks whose `using()` or `@Locked` call is running, each with the chain of locks its call
   * runs within. At shutdown they stay held (their signal aborts) until the call gives them back,
   * as a running job's do: given back under a call that goes on, another instance would take the
   * key while this one still works under it.
   */
  private readonly inCall = new Map<HeldLock, readonly Lock[]>();

  /**
   * Tells the `using()` and `@Locked` calls running within a lock of `outer` (a job run's locks,
   * a leader's term), whose shutdown phase comes before this module's: such a call stops on its
   * own lock's signal, and the run waiting for it could not end within its phase otherwise. They
   * are told why that lock ended: a leader stepping down is no shutdown.
   */
  interruptCallsWithin(outer: readonly Lock[]): void {
    for (const [lock, within] of this.inCall) {
      // A lock of `outer` itself (a job's run lock, which runs within its owner lease's handle) is
      // its phase's to tell and give back: a run still going past that phase is not waited for again.
      if (outer.includes(lock)) continue;
      const ending = within.find((held) => outer.includes(held));
      if (ending === undefined) continue;
      lock.interrupt(steppedDown(ending) ? 'stepped-down' : 'shutdown');
      // Told early, not waited for there (a call nobody awaits, started from a hook, goes on
      // after it): this module's phase still keeps its lock until it ends.
      this.toldEarly.add(lock);
    }
    // And the calls still waiting for their lock there, which no signal of theirs tells: they end
    // now as this module's phase would end them, not after the job's or leader's phase gave up on
    // them. (A step-down's, and a loss's, end as the lock's signal aborts: see endWaitWithChain.)
    for (const [ended, within] of this.waitsWithin) {
      const ending = within.find((held) => outer.includes(held));
      if (ending === undefined || steppedDown(ending)) continue;
      this.waitsWithin.delete(ended);
      // The reason shutdown ends a wait with: the call rejects with LockNotAcquiredError, as then (see Acquisition.giveUp).
      ended.abort(shutdownReason());
    }
  }

  private readonly toldEarly = new WeakSet<HeldLock>();
  private callsEnded?: () => void;

  get closing(): AbortSignal {
    return this.shutdown.signal;
  }

  unconfirmedRelease(names: LockRedisKeys, token: string, until: number): void {
    // Nothing can be sent at shutdown on a closed client (a client handed in that its owner closed
    // first). Before, its owner may open it again (ioredis' connect()): the release waits for that.
    if (this.closed && this.clientsClosed()) this.unconfirmed.giveUp(names, until, this.clock.now());
    else this.unconfirmed.add(names, token, until, this.clock.now());
  }

  /** Lost locks whose holder's release is on its way: no longer in `heldLocks`, ended at shutdown all the same. */
  private readonly lostReleasing = new Set<HeldLock>();

  releasingLost(lock: HeldLock, inFlight: boolean): void {
    if (inFlight) this.lostReleasing.add(lock);
    else this.lostReleasing.delete(lock);
  }

  get shuttingDown(): boolean {
    return this.closed;
  }

  /** Holders' releases not yet answered, while anyone listens (see ReleasesOnTheirWay). */
  private readonly releasesOnTheirWay = new ReleasesOnTheirWay();

  releaseSent(channel: string, reply: Promise<unknown>): void {
    this.releasesOnTheirWay.track(channel, reply);
  }

  releaseInRedis(names: LockRedisKeys, token: string): Promise<ReleaseReply> {
    let reply: Promise<ReleaseReply>;
    try {
      reply = this.sendRelease(names, token);
    } catch (error) {
      return Promise.reject(error);
    }
    return reply.then((settled) => {
      this.wakeGranted(names, settled);
      return settled;
    });
  }

  sendRelease(names: LockRedisKeys, token: string, ttl?: number): Promise<ReleaseReply> {
    if (isRead(names)) return this.readStore(names.read.key).release(names, token, WAITER_LEASE_MS);
    if (isSemaphore(names)) return this.semaphores(names.semaphore.key).release(names, token, WAITER_LEASE_MS);
    const ticket = ttl === undefined ? undefined : this.parking?.releasing(names, token, ttl);
    if (ticket === undefined) return this.store.release(names, token, WAITER_LEASE_MS);
    const parking = this.parking!;
    let sent: Promise<ReleaseReply>;
    try {
      sent = this.store.release(names, token, WAITER_LEASE_MS, ticket.park);
    } catch (error) {
      // Answered all the same: a ticket left on its way would hold up every later caller of the key.
      sent = Promise.reject(error);
    }
    return sent.then(
      (reply) => {
        parking.answered(names, ticket, reply);
        return reply;
      },
      (error: unknown) => {
        parking.answered(names, ticket, undefined);
        throw error;
      },
    );
  }

  wakeGranted(names: LockRedisKeys, reply: ReleaseReply): void {
    if (this.notifier === undefined) return;
    // A permit given back, or a lock handed to the readers at the head of its queue, may admit
    // several waiters: wake each one in this process.
    const grants = reply.grants;
    if (grants !== undefined) {
      for (const grant of grants) this.notifier.wake(names.released, grant.token, grant.fencingToken);
    } else if (reply.grant !== undefined) {
      this.notifier.wake(names.released, reply.grant.token, reply.grant.fencingToken);
    }
  }

  acquire(keys: readonly string[], options?: AnyLockOptions): Promise<MultiKeyLock>;
  acquire(key: string, options?: AnyLockOptions): Promise<Lock>;
  acquire(key: string | readonly string[], options?: AnyLockOptions): Promise<Lock>;
  // Not async: every lock comes this way, and an async layer costs two promises.
  acquire(key: string | readonly string[], options?: AnyLockOptions): Promise<Lock> {
    if (isKeyList(key)) return this.acquireKeys(key, options);
    return this.acquireOne(key, options, undefined, 'acquire');
  }

  /** See `SingleKeyLocks.checkPart`. */
  checkPart(key: string, options: AnyLockOptions | undefined): void {
    this.prepare(key, options);
  }

  /** See `SingleKeyLocks.acquirePart`. */
  acquirePart(key: string, options: AnyLockOptions | undefined, calledAt: number): Promise<Lock> {
    return this.acquireOne(key, options, calledAt);
  }

  /**
   * `acquire` of one key; `calledAt`: when the call began, if it waited for a parked lock's answer
   * first (`again`: it did, and waits for its process' parking no more); `call`: the public call
   * its bad key or options are refused as (none for a part of a multi-key call, checked with its
   * key list).
   */
  private acquireOne(key: string, options: AnyLockOptions | undefined, calledAt?: number, call?: LockCall, again = false): Promise<Lock> {
    let prepared: ReturnType<LockManager['prepare']>;
    try {
      prepared = this.prepare(key, options, call);
    } catch (error) {
      return Promise.reject(error);
    }
    const { timing, names, reentered, semaphore, read, fairness } = prepared;
    if (reentered) return Promise.resolve(reentered);
    const parked = this.parked(key, prepared, options, this.boundSince(timing, calledAt), calledAt, again);
    if (parked === undefined) return this.startAcquisition(key, names, timing, options, semaphore, read, fairness, calledAt).run(this.endAcquire);
    if (parked instanceof HeldLock) return Promise.resolve(parked);
    const since = calledAt ?? this.clock.now();
    return parked.then(
      () => this.acquireOne(key, options, since, call, true),
      (error: unknown) => {
        throw this.notAcquiredBehindPark(key, since, error);
      },
    );
  }

  /**
   * `acquire` for a caller that only needs to be called back (every `@Locked` call): a new lock
   * is handed over from the acquisition's own `then`, one promise and one microtask less than a
   * `then` on `acquire()`. Neither callback may throw.
   */
  acquireThen(key: string | readonly string[], options: AnyLockOptions | undefined, onLock: (lock: Lock) => void, onFailed: (error: unknown) => void): void {
    if (isKeyList(key)) {
      this.acquireKeys(key, options).then(onLock, onFailed);
      return;
    }
    this.acquireOneThen(key, options, onLock, onFailed);
  }

  /** `acquireThen` of one key; `calledAt` and `again` as for `acquireOne`. */
  private acquireOneThen(key: string, options: AnyLockOptions | undefined, onLock: (lock: Lock) => void, onFailed: (error: unknown) => void, calledAt?: number, again = false): void {
    let prepared: ReturnType<LockManager['prepare']>;
    try {
      prepared = this.prepare(key, options);
    } catch (error) {
      // Settled in a later microtask, as acquire() would.
      Promise.reject(error).then(onLock, onFailed);
      return;
    }
    if (prepared.reentered) {
      Promise.resolve(prepared.reentered).then(onLock, onFailed);
      return;
    }
    const parked = this.parked(key, prepared, options, this.boundSince(prepared.timing, calledAt), calledAt, again);
    if (parked !== undefined) {
      if (parked instanceof HeldLock) {
        Promise.resolve(parked).then(onLock, onFailed);
        return;
      }
      const since = calledAt ?? this.clock.now();
      parked.then(
        () => this.acquireOneThen(key, options, onLock, onFailed, since, true),
        (error: unknown) => onFailed(this.notAcquiredBehindPark(key, since, error)),
      );
      return;
    }
    const { timing, names, semaphore, read, fairness } = prepared;
    this.startAcquisition(key, names, timing, options, semaphore, read, fairness, calledAt).runThen(this.endAcquire, onLock, onFailed);
  }

  /** How long a wait for a parked lock's answer may last: the call's waitTimeout, less what it already waited since `calledAt`. */
  private boundSince(timing: LockTiming, calledAt: number | undefined): number {
    const bound = acquireBound(timing);
    return calledAt === undefined || timing.waitTimeout <= 0 ? bound : Math.max(LAST_ATTEMPT_GRACE_MS, calledAt + timing.waitTimeout - this.clock.now());
  }

  /**
   * A barging mutex this process parked for its next caller (see `LockParking`): the lock, a
   * promise to wait for before asking again, or undefined to ask Redis. The wait (for a parking
   * release's answer, which a FIFO caller or a reader of the key waits for too, or a step aside) ends as an attempt's would: on the caller's signal, at
   * shutdown, or past `bound` ms (Redis did not answer the release) with the same error.
   * `since`: when the call began, if it waited for such an answer already (its events count from
   * there); `again`: it did, and waits no more: a lock parked meanwhile, else undefined.
   */
  private parked(key: string, prepared: ReturnType<LockManager['prepare']>, options: AnyLockOptions | undefined, bound: number, since?: number, again = false): HeldLock | Promise<void> | undefined {
    if (this.parking === undefined || prepared.semaphore !== undefined) return undefined;
    // A FIFO caller or a reader never takes a parked lock: it is freed first, and a parking
    // release on its way is waited for as a barging caller waits for it.
    const otherKind = !prepared.fairness.parks || prepared.read;
    const askedAt = otherKind ? since : (since ?? this.clock.now());
    const parked = otherKind
      ? this.parking.otherKindAsking(prepared.names)
      : this.parking.asking(key, prepared.names, prepared.timing, options, () => this.newToken(options), askedAt);
    if (parked === undefined || parked instanceof HeldLock) return parked;
    // Waited once already: ask Redis. A greedy loop whose critical section does no I/O takes the
    // parked lock a few microtasks before this caller and has sent its next park request by the
    // time it asks again; waiting for each of those, it would never reach Redis (whose barging
    // waiters end a streak), and no bound of its own would end the waits.
    if (again) return undefined;
    const calledAt = askedAt ?? this.clock.now();
    const signal = options?.signal;
    return this.replyWaits
      .wait(parked, bound, signal, noop)
      .then((settled) => {
        if (settled === TIMED_OUT) throw this.noAnswer(key, bound);
      })
      .catch((error: unknown) => {
        if (this.listening) {
          const outcome = signal?.aborted && error === signal.reason ? 'aborted' : 'error';
          this.emit({ type: 'not-acquired', key, name: options?.name, ...(partOf(options) && { keys: partOf(options) }), waitedMs: this.clock.now() - calledAt, outcome, afterWaiting: false, at: Date.now() });
        }
        throw endedByShutdown(this.closed, key, this.clock.now() - calledAt, error, signal);
      });
  }

  /** What the parking may ask of this engine. */
  private readonly parkingHost: ParkingHost = ((manager: LockManager): ParkingHost => ({
    get clock() {
      return manager.clock;
    },
    get closed() {
      return manager.closed;
    },
    // Real time, as for shutdownTimeout: a test's manual clock need not move while a loop runs.
    get asideClock() {
      return manager.backend.shutdownClock ?? systemClock;
    },
    hold: (...args) => manager.hold(...args),
    acquired: (...args) => manager.acquired(...args),
    // A failed one is sent again as a holder's release is: nobody else can free the lock before its lease ends.
    unpark: (names, token, until) => manager.cleanUp(manager.releaseInRedis(names, token).catch(() => manager.unconfirmedRelease(names, token, until))),
  }))(this);

  /** `method`: the public method called, which a bad key list's error names. */
  private async acquireKeys(key: readonly string[], options: AnyLockOptions | undefined, method: LockCall = 'acquire'): Promise<Lock> {
    const keys = canonicalKeys(key, method);
    if (this.closed) this.assertOpen(describeCall(method, keys));
    // A key's own refusal (checked for every key before any is taken) named as the call made.
    return acquireAll(this, keys, options, this.checkListCall(keys, options, method).waitTimeout).catch((error: unknown) => {
      throw namingCall(error, method, keys);
    });
  }

  /** A multi-key call's options, refused as that call's (`acquire(keys)`) before any part is asked for. */
  private checkListCall(keys: readonly string[], options: AnyLockOptions | undefined, call: LockCall): LockTiming {
    try {
      const { timing, fairness } = this.resolve(options);
      if (fairness === BARGING) this.assertBarges(keys[0]!);
      return timing;
    } catch (error) {
      throw namingCall(error, call, keys);
    }
  }

  /** A new acquisition of `key`, counted until it ends (shutdown waits for it). */
  private startAcquisition(
    key: string,
    base: LockRedisKeys,
    timing: LockTiming,
    options: AnyLockOptions | undefined,
    semaphore: SemaphoreRequest | undefined,
    read: boolean,
    fairness: FairnessRule,
    calledAt?: number,
  ): Acquisition {
    const acquisition = new Acquisition(this.acquisitionHost, key, timing, options, lockKind(key, base, semaphore, read), fairness, calledAt, this.chainWait(timing, options));
    this.acquiring++;
    return acquisition;
  }

  /**
   * Waits begun within a chain of held locks, with the chain: a job run's or a leader's shutdown
   * phase ends them (see `interruptCallsWithin`), as it tells the calls running under their locks.
   */
  private readonly waitsWithin = new Map<AbortController, readonly Lock[]>();

  /** The wait of a call made within a chain of held locks (none outside one, or for a call that does not wait). */
  private chainWait(timing: LockTiming, options: AnyLockOptions | undefined): ChainWait | undefined {
    const within = this.chain.getStore();
    if (within === undefined || within.length === 0 || timing.waitTimeout <= 0) return undefined;
    const ended = new AbortController();
    this.waitsWithin.set(ended, within);
    // The caller's own signal ends it too (followed, not AbortSignal.any(): see followSignal).
    const unfollow = options?.signal === undefined ? undefined : followSignal(options.signal, ended);
    const unfollowChain = endWaitWithChain(within, ended);
    return {
      signal: ended.signal,
      done: () => {
        this.waitsWithin.delete(ended);
        unfollow?.();
        unfollowChain();
      },
    };
  }

  /** What an `Acquisition` may ask of this engine. */
  private readonly acquisitionHost: AcquisitionHost = ((manager: LockManager): AcquisitionHost => ({
    get clock() {
      return manager.clock;
    },
    get watcher() {
      return manager.notifier;
    },
    get confirmsGrants() {
      return manager.store.confirmsGrants === true;
    },
    get listening() {
      return manager.listening;
    },
    get closed() {
      return manager.closed;
    },
    get shutdown() {
      return manager.shutdown.signal;
    },
    connectionResets: () => manager.store.connectionResets?.(),
    emit: (event) => manager.emit(event),
    // Through the manager's own method, which tests count (test/support/mechanism.ts).
    attempt: (...args) => manager.attempt(...args),
    hold: (...args) => manager.hold(...args),
    acquired: (...args) => manager.acquired(...args),
    leave: (...args) => manager.leave(...args),
    releaseOnItsWay: (channel) => manager.releasesOnTheirWay.onItsWay(channel),
    newToken: (options, since) => manager.newToken(options, since),
    cleanUp: (work) => manager.cleanUp(work),
    warnPolling: (key, waitedMs) => manager.warnPolling(key, waitedMs),
    noAnswer: (key, bound) => manager.noAnswer(key, manager.attemptBound(bound)),
    refusedForGood: (error, key) => {
      const closed = manager.clientsClosed();
      return lastingRefusal(error, closed) === undefined ? undefined : storeFailure(error, `Lock ${quoteKey(key)} could not be acquired`, '', closed);
    },
  }))(this);

  tryAcquire(keys: readonly string[], options?: AnyLockOptions): Promise<MultiKeyLock | null>;
  tryAcquire(key: string, options?: AnyLockOptions): Promise<Lock | null>;
  tryAcquire(key: string | readonly string[], options?: AnyLockOptions): Promise<Lock | null>;
  async tryAcquire(key: string | readonly string[], options?: AnyLockOptions): Promise<Lock | null> {
    if (isKeyList(key)) {
      const keys = canonicalKeys(key, 'tryAcquire');
      if (this.closed) this.assertOpen(describeCall('tryAcquire', keys));
      this.checkListCall(keys, options, 'tryAcquire');
      return tryAcquireAll(this, keys, options).catch((error: unknown) => {
        throw namingCall(error, 'tryAcquire', keys);
      });
    }
    return this.tryAcquireOne(key, options);
  }

  /** `tryAcquire` of one key; `again`: it waited for its process' parking once, and waits no more (see `parked`). */
  private async tryAcquireOne(key: string, options: AnyLockOptions | undefined, again = false): Promise<Lock | null> {
    const prepared = this.prepare(key, options, 'tryAcquire');
    const { timing, names: base, reentered, semaphore, read, fairness } = prepared;
    if (reentered) return reentered;
    const parked = this.parked(key, prepared, options, LAST_ATTEMPT_GRACE_MS, undefined, again);
    if (parked instanceof HeldLock) return parked;
    if (parked !== undefined) {
      await parked.catch((error: unknown) => {
        throw isUnansweredRead(error) ? this.tryAcquireUnanswered(key, options, LAST_ATTEMPT_GRACE_MS) : error;
      });
      return this.tryAcquireOne(key, options, true);
    }
    const calledAt = this.clock.now();
    const token = this.newToken(options);
    const sent: SentAttempt = {};
    const names = lockKind(key, base, semaphore, read).names(token);
    const name = options?.name;
    const keys = partOf(options);
    this.acquiring++;
    let outcome: HeldLock | { pttl: number };
    try {
      // No waiting, but no hanging either: a late answer gets the grace, then the call fails.
      const settled = await this.attempt(key, names, token, timing, false, LAST_ATTEMPT_GRACE_MS, options?.signal, calledAt, sent);
      // Refused as isLocked() and inspect() are: naming the call, and answered 503 by the interceptor.
      if (settled === TIMED_OUT) {
        this.backend.unanswered?.();
        throw this.tryAcquireUnanswered(key, options, this.attemptBound(LAST_ATTEMPT_GRACE_MS));
      }
      // A reply that came after its lease ran out was given back: the lock is not ours, and
      // nobody else's either (it was free): not "busy", which a job would take for a run elsewhere.
      // Redis or the network slow for once (or this process stalled) passes: asking again may
      // well get it (a 503 over HTTP, not a 500 to fix).
      if (settled === STALE_REPLY) {
        throw new RedisUnavailableError(`${tryAcquireCall(key, options)}: Redis granted the lock but its reply came after the lease (${timing.ttl} ms) had run out here; it was given back.`);
      }
      outcome = settled;
    } catch (error) {
      // The reply was lost, not necessarily the script's effect: give back what it may have taken.
      this.leave(names, token, timing, sent.reply);
      if (this.listening) this.emit({ type: 'not-acquired', key, name, ...(keys && { keys }), waitedMs: this.clock.now() - calledAt, outcome: options?.signal?.aborted ? 'aborted' : 'error', afterWaiting: false, at: Date.now() });
      const ended = endedByShutdown(this.closed, key, this.clock.now() - calledAt, error, options?.signal);
      // The caller's own abort reason stays its own; a client's error is named as the call.
      throw ended !== error || (options?.signal?.aborted === true && error === options.signal.reason) ? ended : this.storeFailure(error, tryAcquireCall(key, options));
    } finally {
      this.settledAcquire();
    }
    if (outcome instanceof HeldLock) {
      // A barging lock parks at its release as one an acquire() took does (see Acquisition.took).
      outcome.parks = fairness.parks;
      return this.acquired(outcome, calledAt, options, false);
    }
    if (this.listening) this.emit({ type: 'not-acquired', key, name, ...(keys && { keys }), waitedMs: this.clock.now() - calledAt, outcome: 'busy', afterWaiting: false, at: Date.now() });
    return null;
  }

  using<T>(keys: readonly string[], fn: (lock: MultiKeyLock) => T | Promise<T>, options?: AnyLockOptions): Promise<T>;
  using<T>(key: string, fn: (lock: Lock) => T | Promise<T>, options?: AnyLockOptions): Promise<T>;
  async using<T>(key: string | readonly string[], fn: (lock: never) => T | Promise<T>, options?: AnyLockOptions): Promise<T> {
    if (typeof fn !== 'function') {
      throw new TypeError(`using(${typeof key === 'string' ? quoteKey(key) : Array.isArray(key) ? 'keys' : typeof key}, fn): fn must be a function, got ${fn === null ? 'null' : typeof fn}.`);
    }
    let lock = await (isKeyList(key) ? this.acquireKeys(key, options, 'using') : this.acquireOne(key, options, undefined, 'using'));
    // A re-entry the outer call released before fn could run (this call started from a microtask
    // of the outer call's last step): fn must not run outside any lock, so the key is taken afresh,
    // as nested work that outlives the outer lock does. A lost outer lock's loss is thrown, as a
    // nested @Locked call's is.
    while (lock instanceof ReentrantLock && lock.released && !isKeyList(key)) {
      await lock.release();
      if (lock.signal.aborted) throw lock.signal.reason;
      lock = await this.acquireOne(key, options, undefined, 'using');
    }
    const where = `using(${typeof key === 'string' ? quoteKey(key) : 'keys'}, fn)`;
    // A nested holder runs inside the outer one's lease: the outer one releases the lock in
    // Redis, the nested handle ends with its call.
    if (lock instanceof ReentrantLock) {
      try {
        return refuseGenerator(await this.runInChain(lock, () => fn(lock as never)), where);
      } finally {
        await lock.release();
      }
    }
    if (!(lock instanceof HeldLock) && !(lock instanceof MultiLock)) return refuseGenerator(await fn(lock as never), where);
    try {
      // A stall between the acquisition and here may have outlived the lease: fn must not start.
      if (!leaseLive(lock, this.clock)) throw lock.signal.reason;
      return refuseGenerator(await this.runInChain(lock, () => fn(lock as never)), where);
    } finally {
      await lock.release().catch((error: unknown) => {
        this.logger.warn(`Release of ${shownLock(lock)} failed (${(error as Error).message}); its lease will expire on its own.`);
      });
    }
  }

  stillHeld(lock: Lock): boolean {
    // A stalled event loop may not have let the deadline sweeper run yet.
    if (lock instanceof HeldLock && lock.held && this.clock.now() >= lock.deadline) lock.expire();
    return lock.held;
  }

  leaseOf(lock: Lock): number {
    if (lock instanceof HeldLock) return lock.ttl;
    // A multi-key lock: its parts share the call's ttl, the shortest one when they differ.
    if (lock instanceof MultiLock) return Math.min(...lock.parts.map((part) => this.leaseOf(part)));
    return this.defaults.ttl;
  }

  outsideChain<T>(fn: () => T): T {
    return this.chain.exit(fn);
  }

  runInChain<T>(lock: Lock, fn: () => T): T {
    const outer = this.chain.getStore() ?? NO_LOCKS;
    if (lock instanceof MultiLock) {
      // Each key of a multi-key lock re-enters on its own; current() names the whole lock.
      const parts = lock.parts.filter((part): part is HeldLock => part instanceof HeldLock);
      for (const part of parts) if (part.held) this.inCall.set(part, outer);
      return this.chain.run([...outer, ...parts, lock], fn);
    }
    if (lock instanceof HeldLock && lock.held) this.inCall.set(lock, outer);
    if (!(lock instanceof HeldLock) && !(lock instanceof ReentrantLock)) return fn();
    return this.chain.run(outer.length === 0 ? [lock] : [...outer, lock], fn);
  }

  async isLocked(key: string): Promise<boolean> {
    if (this.closed) this.assertOpen(describeCall('isLocked', key), READ_REFUSED);
    const exists = this.store.exists(lockRedisKeys(this.options.keyPrefix, checkKeyOf('isLocked', key)).lock).catch((error: unknown) => {
      throw this.storeFailure(error, `isLocked(${quoteKey(key)})`);
    });
    return this.untilShutdown(exists, 'isLocked', key, LAST_ATTEMPT_GRACE_MS);
  }

  /**
   * What Redis holds for `key`: holder, lease left, fencing token, waiters, and the semaphore
   * of that name when it is in use (its read goes out beside the lock's, not after it).
   */
  async inspect(key: string): Promise<LockInspection> {
    return (await this.inspectWithOwner(key)).inspection;
  }

  /** `inspect`, with the owner token it read (`null`: free): the lock board names a holder by it. */
  async inspectWithOwner(key: string): Promise<{ inspection: LockInspection; owner: string | null }> {
    if (this.closed) this.assertOpen(describeCall('inspect', key), READ_REFUSED);
    const names = lockRedisKeys(this.options.keyPrefix, checkKeyOf('inspect', key));
    const read = Promise.all([this.store.inspect(names), this.store.inspectSemaphore?.(names) ?? null]).catch((error: unknown) => {
      throw this.storeFailure(error, `inspect(${quoteKey(key)})`);
    });
    const [snapshot, semaphore] = await this.untilShutdown(read, 'inspect', key, LAST_ATTEMPT_GRACE_MS);
    const held = snapshot.owner !== null;
    const holder = held ? parseHolder(snapshot.owner!) : undefined;
    const inspection = {
      key,
      held,
      ...(held ? { ttlMs: leaseLeft(snapshot.pttl) } : {}),
      ...(snapshot.fencingToken === null ? {} : { fencingToken: snapshot.fencingToken }),
      waiters: snapshot.waiters,
      ...(holder ? { holder } : {}),
      ...(held && snapshot.readers !== undefined ? { readers: snapshot.readers } : {}),
      ...(semaphore === null ? {} : { semaphore: semaphoreInspection(semaphore) }),
    };
    return { inspection, owner: snapshot.owner };
  }

  /**
   * A read a route may await (`isLocked`, `inspect`, the lock board's list and release): it ends
   * with shutdown's first phase, as a lock's wait does, so that a frozen Redis cannot hold
   * `app.close()` up through that request; and with `bound` (ms) when given, as an attempt's
   * answer is waited for, so that it cannot hold the request for as long as Redis is gone
   * either (a client without a command timeout waits for ever). `method` (and `key`) name it in
   * the refusal.
   */
  async untilShutdown<T>(reply: Promise<T>, method: string, key?: string, bound = Infinity): Promise<T> {
    const call = `${method}${key === undefined ? '' : `(${quoteKey(key)})`}`;
    const settled = await this.replyWaits.wait(reply, bound, undefined, (value) => value).catch((error: unknown) => {
      if (error !== this.shutdown.signal.reason) throw error;
      throw shutDownRefusal(`LockService shut down (the application is closing) while ${call} waited for Redis.`);
    });
    if (settled === TIMED_OUT) {
      this.backend.unanswered?.();
      throw unansweredRead(`${call}: Redis did not answer within ${bound} ms.`);
    }
    return settled as T;
  }

  current(key?: string): Lock | undefined {
    // A key no lock can have is refused as isLocked() and inspect() refuse it, not read as "not held here".
    if (key !== undefined) checkKeyOf('current', key);
    const stack = this.chain.getStore();
    if (stack === undefined) return undefined;
    // A lock its using() or @Locked call has released is over for code still running from it (a
    // timer, a promise nobody awaited): current() says so, as it does outside any chain.
    // current(key) names a key's own lock, never a multi-key one whose first key it is.
    const lock = stack.findLast((held) => !held.released && (key === undefined || (!(held instanceof MultiLock) && held.key === key)));
    if (lock === undefined) return undefined;
    // Never hand out a lease past its local deadline as held: report the loss first.
    leaseLive(lock, this.clock);
    return lock;
  }

  /**
   * First phase of shutdown, while the application's own Redis clients are still open: takes
   * no new locks, ends every wait, tells holders through their signal, and gives back every
   * lock this process holds or may still obtain from an acquire in flight, waiting at most
   * `shutdownTimeout` for Redis.
   */
  stop(): Promise<void> {
    this.stopping ??= this.giveBackAll();
    return this.stopping;
  }

  /** Second phase: stops the timers and closes the connections it opened. */
  async close(): Promise<void> {
    await this.stop();
    this.unconfirmed.stop();
    this.scheduler.close();
    this.sweeper.close();
    this.events.complete();
    this.backend.close();
    this.closedConnections = true;
  }

  private closedConnections = false;

  /** Whether `close()` ran: the module's own connections are closed (a client handed in is its owner's, closed at their shutdown hook). */
  get connectionsClosed(): boolean {
    return this.closedConnections;
  }

  private async giveBackAll(): Promise<void> {
    this.closed = true;
    this.backend.shuttingDown?.();
    // Real time, whatever the clock: this bounds how long Redis may keep the application waiting.
    const clock = this.backend.shutdownClock ?? systemClock;
    const deadline = clock.now() + this.options.shutdownTimeout;
    this.shutdown.abort(shutdownReason());
    this.replyWaits.end(this.shutdown.signal.reason);
    this.parking?.close();
    const heldAtShutdown = [...this.heldLocks];
    // Calls running under their locks are told to stop and keep them until they end, for two
    // thirds of shutdownTimeout at most: the rest is the give-back's.
    // A lock told to stop before (a job's run lock, in onModuleDestroy) had its shutdownTimeout
    // there already: a run still going past it is not waited for twice.
    for (const lock of heldAtShutdown) if (this.inCall.has(lock) && lock.signal.aborted && !this.toldEarly.has(lock)) this.inCall.delete(lock);
    const busy = heldAtShutdown.filter((lock) => this.inCall.has(lock));
    // Every holder is told at once (docs/configuration.md): a lock taken with acquire() too, whose
    // give-back comes after the calls' wait (it may be one a running call took inside it).
    for (const lock of heldAtShutdown) lock.interrupt();
    if (busy.length > 0) {
      const ended = new Promise<void>((resolve) => (this.callsEnded = resolve));
      if (this.inCall.size > 0) await settleWithin(ended, deadline - clock.now() - this.options.shutdownTimeout / 3, [], clock);
      this.callsEnded = undefined;
    }
    for (const lock of heldAtShutdown) this.cleanUp(lock.shutdown());
    // Lost locks' releases on their way get their answer within the same time.
    for (const lock of this.lostReleasing) this.cleanUp(lock.releaseSettled());
    this.unconfirmed.resendAll(this.clock.now());
    // An acquire in flight may still obtain its lock; hold() then hands it straight back, and
    // a failed one leaves. Both register clean-ups, so wait until nothing is left to wait for;
    // a release that failed (its own or one before) is sent again meanwhile.
    while ((this.acquiring > 0 || this.pendingCleanups.size > 0 || this.unconfirmed.left(this.clock.now())) && clock.now() < deadline) {
      const acquiresSettled = this.acquiring > 0 ? new Promise<void>((resolve) => (this.acquiringSettled = resolve)) : undefined;
      await settleWithin(Promise.allSettled([...this.pendingCleanups, acquiresSettled, this.unconfirmed.settled()]), deadline - clock.now(), [], clock);
      // Let the callers that just settled register their clean-ups.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const givenUp = this.unconfirmed.givenUpAtShutdown();
    if (givenUp.length > 0) {
      this.logger.warn(`Releases refused for good (the Redis client was closed, or Redis refuses the command) were not sent again: ${shownKeys(givenUp)} stay in Redis until their ttl runs out.`);
    }
    const owed = this.backend.owedAtShutdown?.();
    if (owed !== undefined && clock.now() < deadline) await settleWithin(owed, deadline - clock.now(), [], clock);
    // Releases Redis has not answered end here, not when Redis comes back: nothing bounds them
    // after this (the deadline sweeper closes; a client handed in stays open).
    for (const lock of heldAtShutdown) lock.endReleaseAtShutdown();
    for (const lock of this.heldLocks) lock.endReleaseAtShutdown();
    for (const lock of this.lostReleasing) lock.endReleaseAtShutdown();
  }

  /** `settledAcquire` for an `Acquisition` to call when it ends: one function, not a closure per call. */
  private readonly endAcquire = (): void => this.settledAcquire();

  private settledAcquire(): void {
    if (--this.acquiring === 0 && this.acquiringSettled !== undefined) {
      const resolve = this.acquiringSettled;
      this.acquiringSettled = undefined;
      resolve();
    }
  }

  private lastPollingWarning = -Infinity;

  /** At most one warning per POLLING_WARNING_MS: every waiter of an outage would say the same. */
  private warnPolling(key: string, waitedMs: number): void {
    if (this.clock.now() - this.lastPollingWarning < POLLING_WARNING_MS) return;
    this.lastPollingWarning = this.clock.now();
    this.logger.warn(
      `Release messages for lock ${quoteKey(key)} could not be subscribed within ${Math.round(waitedMs)} ms; waiters poll every ${WAITER_REFRESH_MS} ms meanwhile.`,
    );
  }

  /**
   * Leaves the queue and gives back what the call's attempts may hold: at once (behind the
   * attempts on the same connection, which covers an attempt still on its way), and again once
   * `after`, an attempt whose reply we stopped waiting for, has settled: a NOSCRIPT retry
   * resends a script behind later commands, so that attempt could run after the first leave and
   * take the lock for a caller that is gone, for a whole ttl (unless the application has closed
   * by then: see below).
   */
  private leave(names: LockRedisKeys, token: string, timing: LockTiming, after?: Promise<unknown>): void {
    const store = isSemaphore(names) ? this.semaphores(names.semaphore.key) : isRead(names) ? this.readStore(names.read.key) : this.store;
    // One refused for good is not sent again: it would be refused alike, as the attempt was, which
    // took nothing so (bar one on a client closed under it, on which nothing can be sent).
    const leave = (): Promise<void> =>
      store.leave(names as never, token, timing.ttl, WAITER_LEASE_MS).catch((error: unknown) => {
        if (!this.refusedForGood(error)) throw error;
      });
    // A leave Redis refused (a failover answering READONLY) is sent again as a release is: an
    // attempt on its way may have taken the lock for a ttl, a queued place lasts a waiter lease.
    const until = (after === undefined ? 2 * WAITER_LEASE_MS : timing.ttl) + WAITER_LEASE_MS;
    // An attempt a frozen server left unanswered settles once it resumes, after app.close()
    // perhaps (and the call it ends with it): nothing is sent then on a client handed in, which
    // the application keeps open. What that attempt took ends with its lease.
    const sent = (): Promise<void> => (this.closedConnections ? Promise.resolve() : leave().catch(() => this.unconfirmed.add(names, token, this.clock.now() + until, this.clock.now(), leave)));
    this.cleanUp(sent());
    if (after !== undefined) this.cleanUp(after.then(noop, noop).then(sent));
  }

  private newToken(options: AnyLockOptions | undefined, since = callSince(options)): string {
    return ownerToken() + this.holder.suffix(options?.label ?? options?.name, since);
  }

  /** The store's semaphore protocol; a clear error where there is none (quorum mode). */
  private semaphores(key: string): SemaphoreStore {
    if (this.store.semaphores === undefined) {
      throw new UnsupportedLockKindError(
        `Semaphores (option "limit", lock ${quoteKey(key)}) are not supported in quorum mode (several independent Redis masters) nor by any store without them: use one Redis, Sentinel or Cluster.`,
      );
    }
    return this.store.semaphores;
  }

  /**
   * Throws the error a call of `key` (a template) with `options` would meet because of the store
   * (a semaphore, a read lock or barging in quorum mode), saying `where` they were given: a startup check of a
   * decorator's options, so that a method every call of which would fail is refused at once.
   */
  assertServes(options: AnyLockOptions | undefined, key: string, where: string): void {
    try {
      const { semaphore, read, fairness } = this.resolve(options);
      if (semaphore !== undefined) this.semaphores(key);
      if (read) this.readStore(key);
      if (fairness === BARGING) this.assertBarges(key);
    } catch (error) {
      if (error instanceof InvalidLockOptionsError) throw error.within(where);
      if (error instanceof UnsupportedLockKindError) throw new UnsupportedLockKindError(`${where}: ${error.message}`);
      throw error;
    }
  }

  /** Barging needs release messages that free a lock; a clear error where there are none (quorum mode). */
  private assertBarges(key: string): void {
    if (this.store.barges === true && this.notifier !== undefined) return;
    throw new InvalidLockOptionsError(
      'fairness',
      'barging',
      `'fifo' in quorum mode (several independent Redis masters; lock ${quoteKey(key)}): its waiters have no release messages to race on. Use one Redis, Sentinel or Cluster for barging`,
    );
  }

  /** The store's read side of read-write locks; a clear error where there is none (quorum mode). */
  private readStore(key: string): ReadStore {
    if (this.store.readers === undefined) {
      throw new UnsupportedLockKindError(
        `Read locks (option mode: 'read', lock ${quoteKey(key)}) are not supported in quorum mode (several independent Redis masters) nor by any store without them: use one Redis, Sentinel or Cluster.`,
      );
    }
    return this.store.readers;
  }

  /** Locks held as readers, so that a chain asking to upgrade one is refused. */
  private readonly readLocks = new WeakSet<HeldLock>();
  /** Permits held by semaphore locks, for re-entry (see `reenter`). */
  private readonly semaphoreLocks = new WeakMap<HeldLock, SemaphoreRequest>();

  /** `call`: the public call a bad key or option is refused as (see `namingCall`). */
  private prepare(
    key: string,
    options: AnyLockOptions | undefined,
    call?: LockCall,
  ): { timing: LockTiming; names: LockRedisKeys; reentered?: Lock; semaphore?: SemaphoreRequest; read: boolean; fairness: FairnessRule } {
    if (this.closed) this.assertOpen(call === 'tryAcquire' && partOf(options) !== undefined ? tryAcquireCall(key, options) : call === undefined ? undefined : describeCall(call, key));
    let resolved: ResolvedCallOptions;
    try {
      checkLockKey(key);
      resolved = this.resolve(options);
      if (resolved.fairness === BARGING) this.assertBarges(key);
      if (resolved.semaphore !== undefined) this.semaphores(key);
      if (resolved.read) this.readStore(key);
    } catch (error) {
      throw call === undefined ? error : namingCall(error, call, key);
    }
    const { timing, semaphore, read, fairness } = resolved;
    options?.signal?.throwIfAborted();
    const names = lockRedisKeys(this.options.keyPrefix, key);
    let reentered: Lock | undefined;
    try {
      reentered = matchFencing(this.reenter(key, read, semaphore), timing);
    } catch (error) {
      // A nested call's `fencing` that cannot share the chain's lock is refused as the call made.
      throw call === undefined ? error : namingCall(error, call, key);
    }
    return { timing, names, reentered, semaphore, read, fairness };
  }

  /** What a frozen options object (each `@Locked` method has one) resolves to, checked once. */
  private readonly resolvedOptions = new WeakMap<AnyLockOptions, ResolvedCallOptions>();

  private resolve(options: AnyLockOptions | undefined): ResolvedCallOptions {
    const frozen = options !== undefined && options !== null && typeof options === 'object' && Object.isFrozen(options);
    const known = frozen ? this.resolvedOptions.get(options) : undefined;
    if (known !== undefined) return known;
    let resolved: ResolvedCallOptions;
    try {
      const timing = resolveLockOptions(options, this.defaults);
      const semaphore = resolveSemaphoreOptions(options);
      const read = isReadMode(options);
      checkLockNaming(options);
      const fairness = resolveFairness(options?.fairness, this.options.fairness, { semaphore: semaphore !== undefined, read });
      resolved = { timing, semaphore, read, fairness };
    } catch (error) {
      throw unreadableOption(error, options, CALL_OPTION_NAMES);
    }
    if (frozen) this.resolvedOptions.set(options, resolved);
    return resolved;
  }

  private reenter(key: string, read: boolean, semaphore: SemaphoreRequest | undefined): Lock | undefined {
    // A semaphore's permits and the lock of the same name are separate locks: each re-enters
    // only its own kind.
    // A lock its call released (code that outlived it: a timer, a listener) is over for the chain:
    // the key is taken afresh there, as after any release.
    const stack = this.chain.getStore();
    if (stack === undefined) return undefined;
    const sameKind = (lock: HeldLock): boolean => lock.key === key && this.semaphoreLocks.has(lock) === (semaphore !== undefined);
    const outer = stack.findLast((lock): lock is HeldLock => lock instanceof HeldLock && !lock.released && sameKind(lock));
    if (outer === undefined) {
      // A key the chain's multi-key lock gave back when another of its keys was lost: the chain
      // works without that lock, as below, and must not take the key afresh. It fails with the
      // part's loss, not the lock's signal, which a step-down or a shutdown may have aborted first.
      const lost = stack.findLast((lock): lock is MultiLock => lock instanceof MultiLock && !lock.released && lock.loss !== undefined && lock.parts.some((part) => part instanceof HeldLock && sameKind(part)));
      if (lost !== undefined) throw lost.loss;
      return undefined;
    }
    const held = this.semaphoreLocks.get(outer);
    if (semaphore !== undefined && held !== undefined && (semaphore.limit !== held.limit || semaphore.permits > held.permits)) {
      const message =
        `Semaphore ${quoteKey(key)}: this call chain holds ${held.permits} permit(s) of limit ${held.limit}, and a nested acquisition asked for ` +
        `${semaphore.permits} of limit ${semaphore.limit}; it cannot share the outer permits. Ask for at most the outer permits, with the same limit.`;
      // Another limit is the error every other caller gets for it, from any call chain.
      if (semaphore.limit !== held.limit) throw new SemaphoreLimitError(held.limit, semaphore.limit, message);
      throw new RedisLockError(message);
    }
    // Two readers upgrading at once would wait for each other forever.
    if (!read && outer.held && this.readLocks.has(outer)) {
      throw new LockUpgradeError(
        key,
        `Lock ${quoteKey(key)}: this call chain holds its read lock and asked for the write lock; upgrading would deadlock with another reader doing the same. Release the read lock first, or take the write lock from the start.`,
      );
    }
    // A stalled event loop may not have let the deadline sweeper run yet.
    if (outer.held && this.clock.now() >= outer.deadline) outer.expire();
    // The outer holder lost the lock: the whole chain is working without it.
    if (outer.signal.aborted) throw outer.signal.reason;
    return outer.held ? new ReentrantLock(outer) : undefined;
  }

  /**
   * One acquire script call. Resolves the lock, or the lease left (`pttl`) of the holder, or
   * `TIMED_OUT` past `bound`; stops waiting on the caller's abort or shutdown. The caller leaves
   * when it gives up, which gives back what this attempt may still take.
   */
  private attempt(
    key: string,
    names: LockRedisKeys,
    token: string,
    timing: LockTiming,
    enqueue: Enqueue,
    bound: number,
    signal: AbortSignal | undefined,
    startedAt: number,
    sent: SentAttempt,
  ): Promise<AttemptOutcome> {
    let reply: Promise<AcquireReply>;
    try {
      reply = isSemaphore(names)
        ? this.semaphores(key).acquire(names, token, timing.ttl, enqueue === true, WAITER_LEASE_MS)
        : isRead(names)
          ? this.readStore(key).acquire(names, token, timing.ttl, enqueue === true, WAITER_LEASE_MS)
          : this.store.acquire(names, token, timing.ttl, enqueue, WAITER_LEASE_MS, timing.unfenced);
    } catch (error) {
      reply = Promise.reject(error);
    }
    sent.reply = reply;
    // A plain function over one wait, not an async one: every lock comes this way.
    return this.replyWaits.wait(reply, this.attemptBound(bound), signal, (settled) => {
      if (!settled.acquired) {
        const limitInUse = (settled as { limitInUse?: number }).limitInUse;
        if (limitInUse !== undefined && isSemaphore(names)) {
          const { limit } = names.semaphore;
          throw new SemaphoreLimitError(
            limitInUse,
            limit,
            `Semaphore ${quoteKey(key)} is in use with limit ${limitInUse}; this call gave limit ${limit}. Every caller of one key must give the same limit.`,
          );
        }
        return settled;
      }
      const lock = this.hold(key, names, token, settled.fencingToken, timing, startedAt, timing.ttl);
      // The reply came after the lease it started had run out here (a stalled process, a slow
      // network): Redis may already have handed the lock on. Never hand it out; give it back.
      if (this.clock.now() >= lock.deadline) {
        lock.expire();
        return STALE_REPLY;
      }
      // Late in its lease (a slow reply): the watchdog's next tick may come after the deadline.
      // Renew now, as a grant taken late is (see Acquisition.takeGrant).
      if (timing.autoRenew && lock.deadline - this.clock.now() < timing.renewInterval) lock.renewSoon();
      return lock;
    });
  }

  /** Whether every client behind the store was closed (see `clientsClosed`): asked after a failure only. */
  clientsClosed(): boolean {
    return clientsClosed(this.backend.clients);
  }

  /**
   * Whether `error`, a give-back's, is a refusal asking again cannot change (see `lastingRefusal`):
   * a closed client's only at shutdown, before which its owner may open it again.
   */
  private refusedForGood(error: unknown): boolean {
    return lastingRefusal(error, this.closed && !(error instanceof RedisLockError) && this.clientsClosed()) !== undefined;
  }

  /** `storeFailure` of a call, saying what to do when its client was closed. */
  private storeFailure(error: unknown, call: string): RedisLockError {
    return storeFailure(error, call, '', !(error instanceof RedisLockError) && this.clientsClosed());
  }

  private noAnswer(key: string, bound: number): RedisLockError {
    this.backend.unanswered?.();
    return unansweredRead(`Redis did not answer the acquire of lock ${quoteKey(key)} within ${Math.round(bound)} ms.`);
  }

  /** A `tryAcquire` Redis did not answer within `bound` ms, refused as `isLocked()` and `inspect()` are: naming the call, answered 503 by the interceptor. */
  private tryAcquireUnanswered(key: string, options: AnyLockOptions | undefined, bound: number): RedisLockError {
    return unansweredRead(`${tryAcquireCall(key, options)}: Redis did not answer within ${Math.round(bound)} ms.`);
  }

  /**
   * What an `acquire` that waited for its process' parking release rejects with when Redis did
   * not answer that release within the call's bound: not acquired, as when Redis leaves its own
   * attempt unanswered, the silence as `cause` (a route answers 503, `onBusy: 'skip'` does not
   * skip). Other errors (shutdown, the caller's abort) pass as they are.
   */
  private notAcquiredBehindPark(key: string, since: number, error: unknown): unknown {
    return isUnansweredRead(error) ? new LockNotAcquiredError(key, this.clock.now() - since, { cause: error }) : error;
  }

  /**
   * How long an attempt given `bound` waits for its reply: with waitForReplicas an acquire that
   * took the lock is answered after its WAIT, which is Redis' answer too, not a silence.
   */
  private attemptBound(bound: number): number {
    return bound + (this.options.waitForReplicas?.timeout ?? 0);
  }

  private hold(key: string, names: LockRedisKeys, token: string, fencingToken: number, timing: LockTiming, leaseStart: number, lease: number): HeldLock {
    if (this.closed) {
      this.cleanUp(this.releaseInRedis(names, token));
      throw shutDownRefusal(`LockService shut down while lock ${quoteKey(key)} was being acquired.`);
    }
    const lock = new HeldLock(this, key, names, token, fencingToken, timing, leaseStart, lease);
    this.heldLocks.add(lock);
    if (isRead(names)) this.readLocks.add(lock);
    if (isSemaphore(names)) this.semaphoreLocks.set(lock, { limit: names.semaphore.limit, permits: names.semaphore.permits });
    return lock;
  }

  private acquired(lock: HeldLock, calledAt: number, options: AnyLockOptions | undefined, afterWaiting: boolean, call?: object): HeldLock {
    lock.handOut();
    const name = options?.name;
    const keys = partOf(options);
    lock.name = name;
    lock.keys = keys;
    if (this.listening) this.emit(ofLock(ofCall({ type: 'acquired', key: lock.key, name, ...(keys && { keys }), fencingToken: lock.fencingToken, waitedMs: this.clock.now() - calledAt, afterWaiting, at: Date.now() }, call), lock));
    return lock;
  }

  cleanUp(work: Promise<unknown>): void {
    const tracked: Promise<unknown> = work.catch(() => undefined).finally(() => this.pendingCleanups.delete(tracked));
    this.pendingCleanups.add(tracked);
  }

  /**
   * `call`: the public call refused, named first (a `@Locked` call's own error names its method);
   * `refused`: what it would have done. Callers ask only once closed: naming a call quotes its
   * key, which no open call should pay for.
   */
  private assertOpen(call?: string, refused = 'no new locks can be taken'): void {
    if (this.closed) {
      throw shutDownRefusal(`${call === undefined ? '' : `${call}: `}LockService is shut down (the application is closing); ${refused}.`);
    }
  }
}


/** Whether `lock`'s signal aborted because a leader stepped down (its term ended without a shutdown). */
function steppedDown(lock: Lock): boolean {
  const reason: unknown = lock.signal.aborted ? lock.signal.reason : undefined;
  return reason instanceof LockLostError && reason.reason === 'stepped-down';
}

/** The chain outside any lock. */
const NO_LOCKS: readonly (HeldLock | MultiLock | ReentrantLock)[] = [];

/** What `isLocked()` and `inspect()`, which take no lock, are refused as after the close. */
const READ_REFUSED = 'Redis is no longer asked';

/**
 * How a `tryAcquire` names itself in its errors: `tryAcquire("k")`, or `tryAcquire(keys), key "k"`
 * for one key of a multi-key call (the caller passed a list, not that key).
 */
function tryAcquireCall(key: string, options: AnyLockOptions | undefined): string {
  return partOf(options) === undefined ? `tryAcquire(${quoteKey(key)})` : `tryAcquire(keys), key ${quoteKey(key)}`;
}
