import type { Clock } from '../time/clock.js';
import type { ResolvedModuleOptions } from '../options/lock-options.js';
import type { LockStore } from '../stores/lock-store.js';
import type { ReleaseWatch } from '../stores/redis/release-notifier.js';
import type { RedisClient } from '../stores/redis/drivers/redis-client.js';

/** Makes the backend of one `LockService` from its resolved options. */
export type LockBackendFactory = (options: ResolvedModuleOptions) => LockBackend;

/** Wakes waiters when a release hands them the lock. */
export interface ReleaseWatcher {
  /**
   * Registers waiter `token` on a lock's release channel. `racesFreed`: it races for a lock a
   * release freed (barging); only such waiters are woken by a freed-lock message, which wakes one
   * waiter of the process (a FIFO or read-lock waiter woken by it would spend it on nothing, and
   * leave the barging waiter it was meant for asleep).
   */
  watch(channel: string, token: string, racesFreed: boolean): ReleaseWatch;
  /** Whether a release published on `channel` from now on reaches a watch made now (the channel's subscription is live). */
  subscribed(channel: string): boolean;
  /** A release in this process handed the lock to `token`: wake it without waiting for the message. */
  wake(channel: string, token: string, fencingToken: number): void;
  close(): void;
}

/**
 * Where the lock engine keeps its locks: a store, and (where waiters queue) what wakes them.
 * One Redis, a Cluster or a quorum of Redis masters (see `redis-backend.ts`), or the memory of
 * this process (`nestjs-redis-lock/testing`).
 */
export interface LockBackend {
  readonly store: LockStore;
  /** Absent where waiters poll (quorum mode). */
  readonly notifier?: ReleaseWatcher;
  /** The Redis clients behind the store, for health checks and the lock board; none in memory. */
  readonly clients: readonly RedisClient[];
  /** The clock the store counts leases on, which the engine's timers must follow; the system's by default. */
  readonly clock?: Clock;
  /**
   * What `shutdownTimeout` is measured on: real time by default, even when `clock` is a test's
   * manual clock (which need not move while the application closes). A simulation whose virtual
   * time always moves gives its own clock, so that a shutdown replays exactly.
   */
  readonly shutdownClock?: Clock;
  /**
   * A command of the store went unanswered past the bound the engine waits for it (a renewal
   * past its tick, an acquire attempt past its bound): a Cluster client may be sending to a
   * frozen master its replica replaced, and is asked to read its slot map again (see
   * `SlotRefresh`). Absent where there is nothing to ask.
   */
  unanswered?(): void;
  /**
   * The application starts (Nest's `onApplicationBootstrap`): the connections the backend made
   * unconnected connect, and its startup checks run. Until then it has no socket of its own
   * open, unless a command was sent (which connects), so a startup that fails earlier (Nest
   * runs no shutdown hook then) leaves none behind. Absent where there is nothing to connect.
   */
  start?(): void;
  /** Shutdown begins: the locks are about to be given back (see `LockScripts.shuttingDown`). */
  shuttingDown?(): void;
  /**
   * Once the locks were given back: what the store still owes Redis (quorum mode: releases a
   * minority of masters missed), which shutdown waits for within `shutdownTimeout`.
   */
  owedAtShutdown?(): Promise<unknown>;
  /** Closes what the backend opened: the subscriber, and connections it created (last). */
  close(): void;
}
