import type { LockLostReason } from '../errors/lock-lost.error.js';

interface LockEventBase {
  /** The key as given by the caller (without the prefix). */
  key: string;
  /** Wall-clock time of the event, `Date.now()`. */
  at: number;
}

/** The lock was acquired in Redis (reentrant acquisitions emit nothing). */
export interface LockAcquiredEvent extends LockEventBase {
  type: 'acquired';
  fencingToken: number;
  /** Time from the call to the acquisition, in milliseconds. */
  waitedMs: number;
}

/** The watchdog (or `extend()`) renewed the lease. */
export interface LockRenewedEvent extends LockEventBase {
  type: 'renewed';
  fencingToken: number;
  /** Round-trip time of the renewal, in milliseconds. */
  latencyMs: number;
}

/** The holder released the lock. */
export interface LockReleasedEvent extends LockEventBase {
  type: 'released';
  fencingToken: number;
  /** Time from acquisition to release, in milliseconds. */
  heldMs: number;
}

/** The lock was lost while held; the lock's signal has been aborted. */
export interface LockLostEvent extends LockEventBase {
  type: 'lost';
  fencingToken: number;
  reason: LockLostReason;
  /** Time from acquisition to the loss, in milliseconds. */
  heldMs: number;
}

/** A caller gave up waiting for the lock (or `tryAcquire()` found it busy). */
export interface LockNotAcquiredEvent extends LockEventBase {
  type: 'not-acquired';
  /** Time the caller waited, in milliseconds. */
  waitedMs: number;
}

/** Everything `LockService.events$` emits, discriminated by `type`. */
export type LockEvent =
  | LockAcquiredEvent
  | LockRenewedEvent
  | LockReleasedEvent
  | LockLostEvent
  | LockNotAcquiredEvent;
