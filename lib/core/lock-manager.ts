import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { Subject, type Observable } from 'rxjs';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { LockEvent } from '../interfaces/lock-event.interface.js';
import type { Lock } from '../interfaces/lock.interface.js';
import type { LockOptions } from '../interfaces/redis-lock-options.interface.js';
import { abortableSleep } from './abortable-sleep.js';
import { now } from './clock.js';
import { HeldLock, type LockOwner } from './held-lock.js';
import { checkLockKey, lockRedisKeys, type LockRedisKeys } from './lock-key.js';
import type { LockLogger } from './lock-logger.js';
import { resolveLockOptions, type LockTiming, type ResolvedModuleOptions } from './lock-options.js';
import { LockScripts, type RedisClient } from './lock-scripts.js';
import type { LockRunner } from './locked-call.js';
import { ReentrantLock } from './reentrant-lock.js';
import { retryDelay } from './retry-delay.js';
import { settleWithin, TIMED_OUT } from './settle-within.js';

/**
 * How long the last attempt of a wait may take even when the wait's time is up, so that a
 * healthy Redis answering a little late still counts.
 */
const LAST_ATTEMPT_GRACE_MS = 1_000;

/**
 * The lock engine, free of Nest: acquisition, waiting, reentrancy, release and shutdown over
 * one Redis client. `LockService` exposes it to Nest applications.
 */
export class LockManager implements LockOwner, LockRunner {
  readonly scripts: LockScripts;
  private readonly events = new Subject<LockEvent>();
  /** The locks the current async call chain holds, innermost last. */
  private readonly chain = new AsyncLocalStorage<readonly HeldLock[]>();
  private readonly heldLocks = new Set<HeldLock>();
  private readonly abandonedAttempts = new Set<Promise<unknown>>();
  private closed = false;
  private readonly defaults: LockTiming;

  constructor(
    private readonly options: ResolvedModuleOptions,
    private readonly client: RedisClient,
    private readonly ownsClient: boolean,
    readonly logger: LockLogger,
  ) {
    this.scripts = new LockScripts(client);
    const { ttl, renewInterval, waitTimeout, autoRenew } = options;
    this.defaults = { ttl, renewInterval, waitTimeout, autoRenew };
  }

  get events$(): Observable<LockEvent> {
    return this.events.asObservable();
  }

  /** Whether anyone listens to events; spares building events nobody reads. */
  get listening(): boolean {
    return this.events.observed;
  }

  emit(event: LockEvent): void {
    this.events.next(event);
  }

  forget(lock: HeldLock): void {
    this.heldLocks.delete(lock);
  }

  async acquire(key: string, options?: LockOptions): Promise<Lock> {
    const { timing, names, reentered } = this.prepare(key, options);
    if (reentered) return reentered;
    const signal = options?.signal;
    const calledAt = now();
    const waitUntil = calledAt + timing.waitTimeout;
    let lastError: unknown;
    try {
      for (let attempt = 0; ; attempt++) {
        let busyFor: number | undefined;
        const remaining = waitUntil - now();
        const bound = timing.waitTimeout === 0 ? Infinity : Math.max(remaining, Math.min(timing.waitTimeout, LAST_ATTEMPT_GRACE_MS));
        try {
          const outcome = await this.attempt(key, names, timing, bound, signal);
          if (outcome instanceof HeldLock) {
            if (this.listening) this.emit({ type: 'acquired', key, fencingToken: outcome.fencingToken, waitedMs: now() - calledAt, at: Date.now() });
            return outcome;
          }
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
        await abortableSleep(Math.min(left, retryDelay(attempt, busyFor)), signal);
      }
    } catch (error) {
      if (this.listening) this.emit({ type: 'not-acquired', key, waitedMs: now() - calledAt, at: Date.now() });
      throw error;
    }
  }

  async tryAcquire(key: string, options?: LockOptions): Promise<Lock | null> {
    const { timing, names, reentered } = this.prepare(key, options);
    if (reentered) return reentered;
    const calledAt = now();
    const outcome = await this.attempt(key, names, timing, Infinity, options?.signal);
    if (outcome instanceof HeldLock) {
      if (this.listening) this.emit({ type: 'acquired', key, fencingToken: outcome.fencingToken, waitedMs: now() - calledAt, at: Date.now() });
      return outcome;
    }
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
    return this.scripts.exists(lockRedisKeys(this.options.keyPrefix, checkLockKey(key)).lock);
  }

  current(key?: string): Lock | undefined {
    const stack = this.chain.getStore();
    if (stack === undefined) return undefined;
    return key === undefined ? stack[stack.length - 1] : stack.findLast((lock) => lock.key === key);
  }

  /**
   * Stops every watchdog, tells holders through their signal, releases their locks in Redis
   * (waiting at most `shutdownTimeout`), and closes the connection if it is ours.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pending: Promise<unknown>[] = [...this.heldLocks].map((lock) => lock.shutdown());
    pending.push(...this.abandonedAttempts);
    await settleWithin(Promise.allSettled(pending), this.options.shutdownTimeout);
    this.events.complete();
    if (this.ownsClient) this.client.disconnect();
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
    timing: LockTiming,
    bound: number,
    signal: AbortSignal | undefined,
  ): Promise<HeldLock | { pttl: number }> {
    const token = randomBytes(16).toString('hex');
    const startedAt = now();
    const reply = this.scripts.acquire(names.lock, names.fence, token, timing.ttl);
    const settled = bound === Infinity && signal === undefined ? await reply : await settleWithin(reply, bound, signal).catch((error: unknown) => {
      if (signal?.aborted && error === signal.reason) this.abandon(reply, names, token);
      throw error;
    });
    if (settled === TIMED_OUT) {
      this.abandon(reply, names, token);
      throw new RedisLockError(`Redis did not answer the acquire of lock "${key}" within ${Math.round(bound)} ms.`);
    }
    if (!settled.acquired) return { pttl: settled.pttl };
    if (this.closed) {
      await this.scripts.release(names.lock, names.released, token);
      throw new RedisLockError(`LockService shut down while lock "${key}" was being acquired.`);
    }
    const lock = new HeldLock(this, key, names, token, settled.fencingToken, timing, startedAt);
    this.heldLocks.add(lock);
    return lock;
  }

  /** An attempt we stopped waiting for may still succeed later: give that lock straight back. */
  private abandon(reply: Promise<{ acquired: boolean }>, names: LockRedisKeys, token: string): void {
    const cleanup = reply
      .then((outcome) => (outcome.acquired ? this.scripts.release(names.lock, names.released, token) : false))
      .catch(() => false)
      .finally(() => this.abandonedAttempts.delete(cleanup));
    this.abandonedAttempts.add(cleanup);
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new RedisLockError('LockService is shut down (the application is closing); no new locks can be taken.');
    }
  }
}
