import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import { Subject, type Observable } from 'rxjs';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { LockEvent } from '../interfaces/lock-event.interface.js';
import type { Lock } from '../interfaces/lock.interface.js';
import type { LockOptions } from '../interfaces/redis-lock-options.interface.js';
import { now } from './clock.js';
import { DeadlineSweeper } from './deadline-sweeper.js';
import { HeldLock, type LockOwner } from './held-lock.js';
import { checkLockKey, lockRedisKeys, type LockRedisKeys } from './lock-key.js';
import type { LockLogger } from './lock-logger.js';
import { resolveLockOptions, type LockTiming, type ResolvedModuleOptions } from './lock-options.js';
import { LockScripts, type AcquireReply, type ReleaseReply } from './lock-scripts.js';
import { QuorumStore } from './quorum-store.js';
import type { OpenedConnection } from './redis-connection.js';
import type { LockStore } from './lock-store.js';
import type { LockRunner } from './locked-call.js';
import { ownerToken } from './owner-token.js';
import { ReentrantLock } from './reentrant-lock.js';
import { ReleaseNotifier, type ReleaseWatch } from './release-notifier.js';
import { RenewalScheduler } from './renewal-scheduler.js';
import { settleWithin, TIMED_OUT } from './settle-within.js';
import { waitForTurn } from './wait-for-turn.js';

/**
 * How long the last attempt of a wait may take even when the wait's time is up, so that a
 * healthy Redis answering a little late still counts.
 */
const LAST_ATTEMPT_GRACE_MS = 1_000;

/**
 * A waiter retries at least this often, even without a release message: that refreshes its
 * place in the queue and covers messages lost to a reconnection.
 */
export const WAITER_REFRESH_MS = 250;

/**
 * A waiter that stopped refreshing (crashed, frozen) loses its place in the queue after this,
 * and a lock handed to a waiter starts on a lease this long (the waiter renews it to its ttl at
 * once), so a waiter that dies first in line delays the lock by at most this.
 */
export const WAITER_LEASE_MS = 4 * WAITER_REFRESH_MS;

/**
 * The lock engine, free of Nest: acquisition, waiting, reentrancy, release and shutdown over
 * one Redis client. `LockService` exposes it to Nest applications.
 */
export class LockManager implements LockOwner, LockRunner {
  readonly store: LockStore;
  readonly scheduler: RenewalScheduler;
  readonly sweeper = new DeadlineSweeper();
  /** Release messages wake waiters (one node only; a quorum's waiters poll). */
  private readonly notifier?: ReleaseNotifier;
  private readonly events = new Subject<LockEvent>();
  /** The locks the current async call chain holds, innermost last. */
  private readonly chain = new AsyncLocalStorage<readonly HeldLock[]>();
  private readonly heldLocks = new Set<HeldLock>();
  private readonly pendingCleanups = new Set<Promise<unknown>>();
  private readonly defaults: LockTiming;
  private closed = false;
  /** Ends every wait at shutdown. */
  private readonly shutdown = new AbortController();

  constructor(
    private readonly options: ResolvedModuleOptions,
    /** One connection, or several independent masters for quorum mode. */
    private readonly connections: OpenedConnection[],
    readonly logger: LockLogger,
  ) {
    const [first] = connections;
    if (connections.length === 1) {
      const scripts = new LockScripts(first!.client, options.fenceRetention);
      this.store = scripts;
      this.notifier = new ReleaseNotifier(first!.client, logger, () => scripts.shardedPubSub());
    } else {
      this.store = new QuorumStore(connections.map(({ client }) => new LockScripts(client, options.fenceRetention)));
    }
    this.scheduler = new RenewalScheduler(this.store, logger);
    const { ttl, renewInterval, waitTimeout, autoRenew } = options;
    this.defaults = { ttl, renewInterval, waitTimeout, autoRenew };
    // Every waiter listens to it; any number may wait.
    setMaxListeners(0, this.shutdown.signal);
  }

  get events$(): Observable<LockEvent> {
    return this.events.asObservable();
  }

  get listening(): boolean {
    return this.events.observed;
  }

  emit(event: LockEvent): void {
    this.events.next(event);
  }

  forget(lock: HeldLock): void {
    this.heldLocks.delete(lock);
  }

  async releaseInRedis(names: LockRedisKeys, token: string): Promise<ReleaseReply> {
    const reply = await this.store.release(names, token, WAITER_LEASE_MS);
    // The waiter it went to may be in this process: wake it without waiting for the message.
    if (reply.grant !== undefined) this.notifier?.wake(names.released, reply.grant.token, reply.grant.fencingToken);
    return reply;
  }

  async acquire(key: string, options?: LockOptions): Promise<Lock> {
    const { timing, names, reentered } = this.prepare(key, options);
    if (reentered) return reentered;
    const signal = options?.signal;
    const calledAt = now();
    const waitUntil = calledAt + timing.waitTimeout;
    const waits = timing.waitTimeout > 0;
    // One token for the whole call: it is also the caller's place in the waiting queue.
    const token = ownerToken();
    let watch: ReleaseWatch | undefined;
    let lastError: unknown;
    let lastAttemptAt = calledAt;
    try {
      for (let attempt = 0; ; attempt++) {
        let busyFor: number | undefined;
        const bound = waits ? Math.max(waitUntil - now(), Math.min(timing.waitTimeout, LAST_ATTEMPT_GRACE_MS)) : Infinity;
        lastAttemptAt = now();
        try {
          const outcome = await this.attempt(key, names, token, timing, waits, bound, signal, lastAttemptAt);
          if (outcome instanceof HeldLock) return this.acquired(outcome, calledAt);
          busyFor = outcome.pttl;
          lastError = undefined;
        } catch (error) {
          if (signal?.aborted && error === signal.reason) throw error;
          lastError = error;
        }
        const left = waitUntil - now();
        if (left <= 0) {
          throw new LockNotAcquiredError(key, now() - calledAt, lastError === undefined ? undefined : { cause: lastError });
        }
        if (watch === undefined && this.notifier !== undefined && lastError === undefined) {
          // Subscribe before the next try, so that a release in between cannot be missed.
          watch = this.notifier.watch(names.released, token);
          await watch.ready;
          continue;
        }
        const refresh = Math.min(left, WAITER_REFRESH_MS, Math.floor(timing.ttl / 3));
        const granted = await waitForTurn(watch, attempt, busyFor, refresh, signal, this.shutdown.signal);
        if (granted !== undefined) {
          // The release that handed the lock over ran after our last attempt: count the
          // (shortened) lease from that attempt, and renew to the full ttl straight away.
          const lease = Math.min(timing.ttl, WAITER_LEASE_MS);
          const lock = this.hold(key, names, token, granted, timing, lastAttemptAt, lease);
          if (lock.deadline - now() > lease / 2) {
            // After the caller's code has started: the new holder runs first.
            setImmediate(() => lock.renewSoon());
            return this.acquired(lock, calledAt);
          }
          // This process was too slow to trust the short lease: renew before handing it out.
          try {
            if (await lock.renewNow()) return this.acquired(lock, calledAt);
          } catch (error) {
            // Unconfirmed: give the lock back (owner-checked) rather than hold it blind.
            lastError = error;
            await lock.release().catch(() => undefined);
          }
        }
      }
    } catch (error) {
      if (waits) this.cleanUp(this.store.leave(names, token, timing.ttl, WAITER_LEASE_MS));
      if (this.listening) this.emit({ type: 'not-acquired', key, waitedMs: now() - calledAt, at: Date.now() });
      throw error;
    } finally {
      watch?.close();
    }
  }

  async tryAcquire(key: string, options?: LockOptions): Promise<Lock | null> {
    const { timing, names, reentered } = this.prepare(key, options);
    if (reentered) return reentered;
    const calledAt = now();
    const token = ownerToken();
    const outcome = await this.attempt(key, names, token, timing, false, Infinity, options?.signal, calledAt);
    if (outcome instanceof HeldLock) return this.acquired(outcome, calledAt);
    if (this.listening) this.emit({ type: 'not-acquired', key, waitedMs: now() - calledAt, at: Date.now() });
    return null;
  }

  async using<T>(key: string, fn: (lock: Lock) => T | Promise<T>, options?: LockOptions): Promise<T> {
    if (typeof fn !== 'function') {
      throw new TypeError(`using("${String(key)}", fn): fn must be a function, got ${fn === null ? 'null' : typeof fn}.`);
    }
    const lock = await this.acquire(key, options);
    // A nested holder runs inside the outer one's lease; the outer one releases.
    if (!(lock instanceof HeldLock)) return await fn(lock);
    try {
      return await this.runInChain(lock, () => fn(lock));
    } finally {
      await lock.release().catch((error: unknown) => {
        this.logger.warn(`Release of lock "${key}" failed (${(error as Error).message}); its lease will expire on its own.`);
      });
    }
  }

  runInChain<T>(lock: Lock, fn: () => T): T {
    if (!(lock instanceof HeldLock)) return fn();
    return this.chain.run([...(this.chain.getStore() ?? []), lock], fn);
  }

  async isLocked(key: string): Promise<boolean> {
    this.assertOpen();
    return this.store.exists(lockRedisKeys(this.options.keyPrefix, checkLockKey(key)).lock);
  }

  current(key?: string): Lock | undefined {
    const stack = this.chain.getStore();
    if (stack === undefined) return undefined;
    return key === undefined ? stack[stack.length - 1] : stack.findLast((lock) => lock.key === key);
  }

  /**
   * Stops every watchdog, tells holders through their signal, releases their locks in Redis
   * (waiting at most `shutdownTimeout`), and closes the connections it opened.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.shutdown.abort(new RedisLockError('LockService shut down (the application is closing) while waiting for a lock.'));
    // Let the waiters just stopped give up their places in the queue before the connection goes.
    await new Promise((resolve) => setImmediate(resolve));
    const pending: Promise<unknown>[] = [...this.heldLocks].map((lock) => lock.shutdown());
    pending.push(...this.pendingCleanups);
    await settleWithin(Promise.allSettled(pending), this.options.shutdownTimeout);
    this.scheduler.close();
    this.sweeper.close();
    this.notifier?.close();
    this.events.complete();
    for (const { client, owned } of this.connections) if (owned) client.disconnect();
  }

  private prepare(key: string, options: LockOptions | undefined): { timing: LockTiming; names: LockRedisKeys; reentered?: Lock } {
    this.assertOpen();
    checkLockKey(key);
    const timing = resolveLockOptions(options, this.defaults);
    options?.signal?.throwIfAborted();
    const names = lockRedisKeys(this.options.keyPrefix, key);
    return { timing, names, reentered: this.reenter(key) };
  }

  private reenter(key: string): Lock | undefined {
    const outer = this.chain.getStore()?.findLast((lock) => lock.key === key);
    if (outer === undefined) return undefined;
    // The outer holder lost the lock: the whole chain is working without it.
    if (outer.signal.aborted) throw outer.signal.reason;
    return outer.held ? new ReentrantLock(outer) : undefined;
  }

  private async attempt(
    key: string,
    names: LockRedisKeys,
    token: string,
    timing: LockTiming,
    enqueue: boolean,
    bound: number,
    signal: AbortSignal | undefined,
    startedAt: number,
  ): Promise<HeldLock | { pttl: number }> {
    const reply = this.store.acquire(names, token, timing.ttl, enqueue, WAITER_LEASE_MS);
    const settled =
      bound === Infinity && signal === undefined
        ? await reply
        : await settleWithin(reply, bound, signal).catch((error: unknown) => {
            if (signal?.aborted && error === signal.reason) this.abandon(reply, names, token);
            throw error;
          });
    if (settled === TIMED_OUT) {
      this.abandon(reply, names, token);
      throw new RedisLockError(`Redis did not answer the acquire of lock "${key}" within ${Math.round(bound)} ms.`);
    }
    if (!settled.acquired) return { pttl: settled.pttl };
    return this.hold(key, names, token, settled.fencingToken, timing, startedAt, timing.ttl);
  }

  private hold(key: string, names: LockRedisKeys, token: string, fencingToken: number, timing: LockTiming, leaseStart: number, lease: number): HeldLock {
    if (this.closed) {
      this.cleanUp(this.releaseInRedis(names, token));
      throw new RedisLockError(`LockService shut down while lock "${key}" was being acquired.`);
    }
    const lock = new HeldLock(this, key, names, token, fencingToken, timing, leaseStart, lease);
    this.heldLocks.add(lock);
    return lock;
  }

  private acquired(lock: HeldLock, calledAt: number): HeldLock {
    if (this.listening) this.emit({ type: 'acquired', key: lock.key, fencingToken: lock.fencingToken, waitedMs: now() - calledAt, at: Date.now() });
    return lock;
  }

  /** An attempt we stopped waiting for may still succeed later: give that lock straight back. */
  private abandon(reply: Promise<AcquireReply>, names: LockRedisKeys, token: string): void {
    this.cleanUp(
      reply.then(async (outcome) => {
        if (outcome.acquired) await this.releaseInRedis(names, token);
      }),
    );
  }

  private cleanUp(work: Promise<unknown>): void {
    const tracked: Promise<unknown> = work.catch(() => undefined).finally(() => this.pendingCleanups.delete(tracked));
    this.pendingCleanups.add(tracked);
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new RedisLockError('LockService is shut down (the application is closing); no new locks can be taken.');
    }
  }
}
