import { Subscription, exhaustMap, timer } from 'rxjs';
import { systemClock, type Clock } from '../time/clock.js';
import { ClockScheduler } from '../time/clock-scheduler.js';
import type { LockLogger } from './lock-logger.js';
import type { LockStore, RenewalOutcome, RenewalPart } from '../stores/lock-store.js';
import { settleWithin, TIMED_OUT } from '../time/settle-within.js';
import { lastingRefusal } from './store-failure.js';

/** A lock as the scheduler sees it. */
export interface Renewable {
  readonly key: string;
  readonly lockKey: string;
  readonly token: string;
  readonly fencingToken: number;
  readonly ttl: number;
  /** Renewal `sequence` failed (`error`: unanswered, LOADING...); one that passes is tried again while the lease lasts. */
  renewalFailed?(sequence: number, error: unknown): void;
  /** Starts a renewal at `startedAt`: its sequence number, or undefined if the lease is gone. */
  beginRenewal(startedAt: number): number | undefined;
  /** Applies the outcome of renewal `sequence`, sent at `startedAt` with `ttl`. */
  completeRenewal(sequence: number, startedAt: number, ttl: number, renewed: RenewalOutcome): void;
  /** Redis refused renewal `sequence` in a way asking again cannot change (`error`, `clientClosed`: see `lastingRefusal`). */
  renewalRefused(sequence: number, error: unknown, clientClosed?: boolean): void;
}

interface Group {
  locks: Set<Renewable>;
  /** The group's own timers: unref'd while it holds no lock, so that it never keeps a process alive. */
  scheduler: ClockScheduler;
  subscription: Subscription;
  /** Empty at the last tick: stopped at the next one if still empty. */
  idle: boolean;
}


/**
 * The watchdog. Locks with the same renewal interval share one RxJS interval, and each tick
 * renews all of them with one round trip per Redis node (see `LockStore.renewBatch`), so
 * holding 10,000 locks costs one timer and one round trip per interval rather than 10,000 of
 * each. `exhaustMap` drops a tick while the previous batch is still in flight, so renewals
 * never overlap. Each group starts at a random phase, so that processes (and groups) do not
 * renew in lockstep. A group stops its interval two ticks after its last lock left (its timer
 * lets the process exit meanwhile), and all groups stop at shutdown.
 */
export class RenewalScheduler {
  private readonly groups = new Map<number, Group>();
  /** Ends the wait for a renewal still in flight at shutdown, so that no timer outlives close(). */
  private readonly closing = new AbortController();

  /**
   * `outside`: runs its function outside any call chain of the lock engine. A group's interval is
   * made by whichever acquisition first used its renewal interval; made in that call's chain, it
   * would tell every later loss of the group (a refused renewal) inside that chain: to signal
   * listeners, a leader's hooks, `current()`.
   */
  constructor(
    private readonly store: LockStore,
    private readonly logger: LockLogger,
    private readonly clock: Clock = systemClock,
    private readonly outside: <T>(fn: () => T) => T = (fn) => fn(),
    /** Told when a tick's renewals are not all answered by the end of the tick (see `LockBackend.unanswered`). */
    private readonly unanswered: () => void = () => undefined,
    /** Whether every client behind the store was closed (see `clientsClosed`): asked after a failure only. */
    private readonly clientsClosed: () => boolean = () => false,
  ) {}

  add(lock: Renewable, renewInterval: number): void {
    let group = this.groups.get(renewInterval);
    if (group === undefined) {
      const locks = new Set<Renewable>();
      const created: Group = { locks, idle: false, scheduler: new ClockScheduler(this.clock), subscription: new Subscription() };
      created.subscription = this.outside(() =>
        timer(renewInterval * (0.5 + Math.random() * 0.5), renewInterval, created.scheduler)
          .pipe(exhaustMap(() => this.tick(renewInterval, created)))
          .subscribe(),
      );
      group = created;
      this.groups.set(renewInterval, group);
    }
    if (group.locks.size === 0) group.scheduler.setUnref(false);
    group.locks.add(lock);
  }

  remove(lock: Renewable, renewInterval: number): void {
    const group = this.groups.get(renewInterval);
    if (group === undefined || !group.locks.delete(lock)) return;
    if (group.locks.size > 0) return;
    // On a stepped clock (the testing module's manual clock) the group stops at once: its
    // lingering ticks would be timers of the test's own, counted in `pendingTimers` of an
    // application that holds nothing.
    if (this.clock.stepped === true) this.stop(renewInterval, group);
    else group.scheduler.setUnref(true);
  }

  close(): void {
    this.closing.abort();
    for (const group of this.groups.values()) group.subscription.unsubscribe();
    this.groups.clear();
  }

  /**
   * A group outlives its last lock by up to two ticks, so that taking and releasing locks in a
   * loop does not start and stop an interval every time.
   */
  private async tick(renewInterval: number, group: Group): Promise<void> {
    if (group.locks.size > 0) {
      group.idle = false;
      await this.renew([...group.locks], renewInterval);
      return;
    }
    if (!group.idle) {
      group.idle = true;
      return;
    }
    this.stop(renewInterval, group);
  }

  private stop(renewInterval: number, group: Group): void {
    group.subscription.unsubscribe();
    if (this.groups.get(renewInterval) === group) this.groups.delete(renewInterval);
  }

  /**
   * Each part of the batch (one per Redis node) applies its outcomes as soon as it has them:
   * a failed or silent node costs its own locks a renewal, and nothing moves their deadlines,
   * so each of them is declared lost when its own runs out; the others are renewed as usual.
   */
  private async renew(locks: Renewable[], renewInterval: number): Promise<void> {
    const startedAt = this.clock.now();
    const batch: BatchItem[] = [];
    for (const lock of locks) {
      const sequence = lock.beginRenewal(startedAt);
      if (sequence !== undefined) batch.push({ lock, sequence, ttl: lock.ttl });
    }
    if (batch.length === 0) return;
    let parts: RenewalPart[];
    try {
      parts = this.store.renewBatch(batch.map(({ lock, ttl }) => ({ lockKey: lock.lockKey, token: lock.token, ttl, fencingToken: lock.fencingToken })));
    } catch (error) {
      this.warn(batch.length, error);
      return;
    }
    // Each lock keeps a failure (LOADING...), for its loss to name if its lease runs out so.
    for (const { indexes, outcomes } of parts) {
      outcomes.catch((error: unknown) => {
        for (const index of indexes) batch[index]!.lock.renewalFailed?.(batch[index]!.sequence, error);
      });
    }
    const applied = parts.map(({ indexes, outcomes }) =>
      outcomes.then(
        (replies) => {
          for (let i = 0; i < indexes.length; i++) {
            const { lock, sequence, ttl } = batch[indexes[i]!]!;
            lock.completeRenewal(sequence, startedAt, ttl, replies[i]);
          }
        },
        (error: unknown) => {
          // Every later tick would be refused alike (an ACL changed under the application): the
          // holders are told now, not when their leases run out.
          // A client its owner closed sends no renewal any more either.
          const closed = this.clientsClosed();
          if (lastingRefusal(error, closed) === undefined) return this.warn(indexes.length, error);
          for (const index of indexes) batch[index]!.lock.renewalRefused(batch[index]!.sequence, error, closed);
        },
      ),
    );
    // A part that hangs (a master that stopped answering) must not hold back the next tick
    // of the others: the tick ends before the next one is due (`exhaustMap` would drop that
    // one), and a late outcome still applies when it comes. The store hears of it: a Cluster
    // client may be sending to a frozen master its replica replaced.
    const settled = await settleWithin(Promise.all(applied), Math.floor(renewInterval * 0.75), [this.closing.signal], this.clock).catch(() => undefined);
    if (settled === TIMED_OUT) this.unanswered();
  }

  private warn(count: number, error: unknown): void {
    this.logger.warn(`Renewal of ${count} lock(s) failed (${(error as Error).message}); retrying until their lease deadlines.`);
  }
}

interface BatchItem {
  lock: Renewable;
  sequence: number;
  ttl: number;
}
