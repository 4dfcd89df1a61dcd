import type { LockLostReason } from '../errors/lock-lost.error.js';

interface LockEventBase {
  /** The key as given by the caller (without the prefix). */
  key: string;
  /**
   * The lock's name, for grouping in metrics: the `@Locked` key template (or `Class.method`
   * for a key function), or the `name` given to `acquire()` / `using()`. Bounded and
   * low-cardinality, unlike `key`. `undefined` when none was given.
   */
  name?: string;
  /**
   * Set on the events of a key taken as one key of a multi-key lock (`acquire([...keys])`,
   * `@Locked([...])`): every key of that lock, in canonical order. Events come per key (each key
   * is a lock of its own in Redis, with its own fencing token); the lock metrics count such a lock
   * once (docs/observability.md). Absent for a lock of one key.
   */
  keys?: readonly string[];
  /** Wall-clock time of the event, `Date.now()`. */
  at: number;
}

/**
 * A caller found the lock busy and starts waiting for it (once per wait, while anyone listens). It is
 * followed by an `acquired` or `not-acquired` event with `afterWaiting: true`.
 */
export interface LockWaitingEvent extends LockEventBase {
  type: 'waiting';
}

/** The lock was acquired in Redis (reentrant acquisitions emit nothing). */
export interface LockAcquiredEvent extends LockEventBase {
  type: 'acquired';
  /** Absent for a lock taken with `fencing: false`. */
  fencingToken?: number;
  /** Time from the call to the acquisition, in milliseconds. */
  waitedMs: number;
  /** Whether a `waiting` event was emitted for this call before. */
  afterWaiting: boolean;
}

/** The watchdog (or `extend()`) renewed the lease. */
export interface LockRenewedEvent extends LockEventBase {
  type: 'renewed';
  /** Absent for a lock taken with `fencing: false`. */
  fencingToken?: number;
  /** Round-trip time of the renewal, in milliseconds. */
  latencyMs: number;
}

/** The holder released the lock. */
export interface LockReleasedEvent extends LockEventBase {
  type: 'released';
  /** Absent for a lock taken with `fencing: false`. */
  fencingToken?: number;
  /** Time from acquisition (when the caller got the lock, where `waitedMs` ended) to release, in milliseconds. */
  heldMs: number;
  /**
   * `true` when Redis did not confirm the release (the command failed): the holder is done
   * with the lock and no longer renews it, and its lease expires in Redis on its own.
   */
  unconfirmed?: true;
}

/** The lock was lost while held; the lock's signal has been aborted. */
export interface LockLostEvent extends LockEventBase {
  type: 'lost';
  /** Absent for a lock taken with `fencing: false`. */
  fencingToken?: number;
  reason: LockLostReason;
  /** Time from acquisition (when the caller got the lock, where `waitedMs` ended) to the loss, in milliseconds. */
  heldMs: number;
}

/**
 * Why a call did not get the lock: `busy` (held by another, and the call did not wait),
 * `timeout` (the wait ran out), `error` (Redis failed or the service shut down), `aborted`
 * (the caller's `signal`, or a lock the call waited within ended while it waited: a job's run
 * lock or an outer `using()`'s lost, a leader's term stepped down from).
 */
export type LockNotAcquiredOutcome = 'busy' | 'timeout' | 'error' | 'aborted';

/** A caller gave up waiting for the lock (or `tryAcquire()` found it busy). */
export interface LockNotAcquiredEvent extends LockEventBase {
  type: 'not-acquired';
  /** Time the caller waited, in milliseconds. */
  waitedMs: number;
  outcome: LockNotAcquiredOutcome;
  /** Whether a `waiting` event was emitted for this call before. */
  afterWaiting: boolean;
}

/**
 * An operator released a lock by force from the lock board of this process. The holder (in
 * any process) learns of it at its next renewal, as a `refused` loss.
 */
export interface LockForceReleasedEvent extends LockEventBase {
  type: 'force-released';
  /** The fencing token of the lock's last acquisition, when known. */
  fencingToken?: number;
  /** Who held it, as `inspect()` reported it, when known. */
  holder?: string;
}

/**
 * Why a call of a job method (`@WithoutOverlapping()`, `@OnOneInstance()`) did not run:
 * - `held-elsewhere`: its run lock is held: a run is still going, on this instance or another;
 * - `other-owner`: another instance owns the job's `<key>:owner` lease;
 * - `shutting-down`: the application is closing;
 * - `lease-expired`: the locks were taken, but a stall (a blocked event loop) outlived a lease
 *   before the run could start, so another instance may hold it now;
 * - `owner-uncertain` (`@OnOneInstance()`): this instance cannot be sure no other one ran this
 *   tick: its claim of the owner lease came back late (held up in the network while the
 *   previous owner ran the tick and then lost the lease), or the lease had too little left.
 *   The lease is kept: the next tick runs here.
 */
export type LockSkipReason = 'held-elsewhere' | 'other-owner' | 'shutting-down' | 'lease-expired' | 'owner-uncertain';

/**
 * A call of a job method was skipped: it resolved `undefined` (or its Observable completed
 * empty) without running. `key` and `name` are those of the lock that decided it: the run lock
 * (`Class.method`), or the `<key>:owner` lease for `other-owner` and `owner-uncertain`, for
 * `lease-expired` when the lease is what ran out, and for every reason of a job without
 * `@WithoutOverlapping()`.
 */
export interface LockSkippedEvent extends LockEventBase {
  type: 'skipped';
  reason: LockSkipReason;
  /** The job method, `ClassName.methodName` (quoted, escaped and cut as a key is, when either name is not a plain identifier). */
  where: string;
}

/** Everything `LockService.events$` emits, discriminated by `type`. */
export type LockEvent =
  | LockWaitingEvent
  | LockAcquiredEvent
  | LockRenewedEvent
  | LockReleasedEvent
  | LockLostEvent
  | LockNotAcquiredEvent
  | LockForceReleasedEvent
  | LockSkippedEvent;
