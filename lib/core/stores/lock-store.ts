import type { SemaphoreStore } from '../semaphore/semaphore-store.js';
import type { ReadStore } from '../rwlock/read-store.js';
import type { AcquireReply, ReleaseReply, ScriptKeys } from './lock-replies.js';
import type { LockRedisKeys } from '../keys/lock-key.js';
import type { SemaphoreSnapshot } from '../semaphore/semaphore-inspect.js';

export type { AcquireReply, Grant, ParkedReply, ReleaseReply, ScriptKeys } from './lock-replies.js';

/**
 * A release's request to park the lock instead of freeing it (`fairness: 'barging'` mutexes, see
 * `engine/lock-parking.ts`): after the owner check, and only with nobody queued, the lock goes
 * to `token` for `ttl` ms under the next fencing token, and no waiter is woken.
 */
export interface ParkRequest {
  token: string;
  ttl: number;
}


/**
 * What an acquire attempt asks the store to do with its caller when the lock is busy: `false`
 * nothing (a try), `true` queue it (or refresh its place), `'barging'` only record, for a waiter
 * lease, that a barging waiter waits (`fairness: 'barging'`), so that releases wake it with a
 * "free" message instead of handing the lock over.
 */
export type Enqueue = boolean | 'barging';

/** One lock in a batch renewal. */
export interface RenewalRequest {
  lockKey: string;
  token: string;
  ttl: number;
  /** The holder's fencing token: quorum mode raises a node's counter to it when it restores the lock there. */
  fencingToken?: number;
}

/**
 * What a renewal found: `true` renewed, `false` refused (the lock is not ours), `undefined`
 * unknown (no answer, or no quorum either way): try again until the lease deadline; or, from a
 * batch (`renewBatch`), a `RenewalRefusal`: refused, Redis' reply saying why.
 */
export type RenewalOutcome = boolean | undefined | RenewalRefusal;

/**
 * A batch's lock refused with Redis' own error (its key holds data of another type: a hash where
 * the lock's string is, WRONGTYPE), which the holder's loss names: the lock is not ours, as
 * `false` says, and what to fix is said with it.
 */
export class RenewalRefusal {
  constructor(readonly error: unknown) {}
}

/** What Redis holds for one lock right now. */
export interface LockSnapshot {
  /** The owner token (the lock key's value), `null` when nobody holds it. */
  owner: string | null;
  /** Milliseconds left on the lease (meaningful only with an owner). */
  pttl: number;
  /** The fencing counter, `null` when the lock was never acquired. */
  fencingToken: number | null;
  /** Callers in the waiting queue. */
  waiters: number;
  /** While readers hold the lock (`owner` is `~r`): how many of them are still there. */
  readers?: number;
}

/**
 * One part of a batch renewal, with its own round trip: the requests it covers (indexes into
 * the batch) and, once known, their outcomes in the same order. Parts settle independently: a
 * part that fails or hangs (its Cluster master is down) rejects or stays pending without
 * holding back the outcomes of the others.
 */
export interface RenewalPart {
  indexes: number[];
  outcomes: Promise<RenewalOutcome[]>;
}

/**
 * Where locks live: one Redis (or Cluster, or Sentinel-managed master), or a quorum of
 * independent Redis masters. The lock engine speaks only to this.
 */
export interface LockStore {
  /** Whether waiters queue in Redis and are woken by release messages (one node only). */
  readonly queues: boolean;
  /**
   * Whether a lock handed over by a release must be confirmed by an acquire call before it is
   * handed out (`waitForReplicas`: that call waits for the replicas). Otherwise the grant's
   * fencing token is taken as it comes.
   */
  readonly confirmsGrants?: boolean;
  /**
   * How often the store's connection was reset so far, where its client sends unanswered commands
   * again after a reset (ioredis): a release answered "not the owner" across a reset may be its
   * own first run's effect, so it is not a loss. Absent where that cannot happen.
   */
  connectionResets?(): number;
  /** Counting semaphores; absent where they are not supported (quorum mode). */
  readonly semaphores?: SemaphoreStore;
  /** The read side of read-write locks (plain locks are the write side); absent where not supported (quorum mode). */
  readonly readers?: ReadStore;
  /**
   * Whether the store runs barging waits (`enqueue: 'barging'`, and releases that publish a
   * free lock to them); quorum mode does not (its waiters have no release messages).
   */
  readonly barges?: boolean;
  /**
   * `unfenced`: the caller takes no fencing token (`fencing: false`). A store may then skip
   * work that only keeps tokens increasing (quorum mode: bringing the nodes' counters into
   * line); the reply's token is not handed out.
   */
  acquire(keys: ScriptKeys, token: string, ttl: number, enqueue: Enqueue, waiterLease: number, unfenced?: boolean): Promise<AcquireReply>;
  renew(lockKey: string, token: string, ttl: number, fencingToken?: number): Promise<RenewalOutcome>;
  /** Renews many locks: one part per Redis node (and per bounded number of locks). */
  renewBatch(requests: RenewalRequest[]): RenewalPart[];
  /** `park`: park the lock instead of freeing it when nobody queued (see `ParkRequest`); a store without `barges` ignores it. */
  release(keys: ScriptKeys, token: string, waiterLease: number, park?: ParkRequest): Promise<ReleaseReply>;
  leave(keys: ScriptKeys, token: string, ttl: number, waiterLease: number): Promise<void>;
  exists(lockKey: string): Promise<boolean>;
  /**
   * Pushes the fencing counter `fence`'s expiry to the module's `fenceRetention` from now, when
   * it has one (a no-op without): a lock held longer than the retention must not outlive its
   * counter, or the next holder's token would come from a new counter (see `NEXT_FENCING`).
   */
  keepFence?(fence: string): Promise<void>;
  /**
   * One page of the lock keys held under `prefix` (the lock board's listing), for a store with
   * no Redis client to SCAN (the in-memory store). `cursor` `'0'` starts; a returned `'0'` ends.
   */
  scanLocks?(prefix: string, cursor: string, count: number): Promise<{ next: string; keys: string[] }>;
  /** Reads a lock's state with read-only commands, in one round trip per node. */
  inspect(keys: ScriptKeys): Promise<LockSnapshot>;
  /**
   * Reads the semaphore of the same key (see `semaphore/`) without writing: `null` when it has
   * neither holders nor waiters. Absent where semaphores are (quorum mode).
   */
  inspectSemaphore?(keys: LockRedisKeys): Promise<SemaphoreSnapshot | null>;
}
