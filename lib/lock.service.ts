import { Inject, Injectable, Logger, Optional, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { LockManager } from './core/engine/lock-manager.js';
import { resolveModuleOptions } from './core/options/lock-options.js';
import { redisBackend } from './core/stores/redis/redis-backend.js';
import type { LockEvent } from './interfaces/lock-event.interface.js';
import type { Lock, MultiKeyLock, UnfencedLock, UnfencedMultiKeyLock } from './interfaces/lock.interface.js';
import { withoutToken } from './core/engine/unfenced-view.js';
import type { LockInspection } from './interfaces/lock-inspection.interface.js';
import type { AnyLockOptions, LockOptions, RedisLockModuleOptions, UnfencedLockOptions } from './interfaces/redis-lock-options.interface.js';
import { LOCK_BACKEND_FACTORY, LOCK_RUNNER } from './redis-lock.constants.js';
import type { LockBackend, LockBackendFactory } from './core/engine/lock-backend.js';
import { REDIS_LOCK_MODULE_METHOD, REDIS_LOCK_MODULE_OPTIONS } from './redis-lock.module-definition.js';
import type { LockRunner } from './core/engine/locked-call.js';
import { neverThrowingLogger } from './core/engine/never-throwing-logger.js';
import { describeCall, namingCall } from './core/engine/call-errors.js';
import { unreadableOption } from './core/options/unreadable-option.js';
import { toMilliseconds } from './core/time/duration.js';
import { InvalidLockOptionsError } from './errors/invalid-lock-options.error.js';
import { warnIfLoadedLazily } from './lazily-loaded.js';

/**
 * Distributed locks on Redis. Every lock is renewed by a watchdog while held, released only by
 * its owner, carries a fencing token, and is reentrant within one async call chain.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class OrdersService {
 *   constructor(private readonly locks: LockService) {}
 *
 *   pay(orderId: string) {
 *     return this.locks.using(`order:${orderId}`, async (lock) => {
 *       // The read claims the row with the token too, so no older holder's late write lands
 *       // between it and the write (docs/fencing.md).
 *       const order = await this.repo.load(orderId, { fencingToken: lock.fencingToken });
 *       await this.repo.save({ ...order, paid: true }, { fencingToken: lock.fencingToken });
 *     });
 *   }
 * }
 * ```
 */
@Injectable()
export class LockService implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly manager: LockManager;
  private readonly backend: LockBackend;

  constructor(
    @Inject(REDIS_LOCK_MODULE_OPTIONS) options: RedisLockModuleOptions,
    @Optional() @Inject(LOCK_BACKEND_FACTORY) backendFactory?: LockBackendFactory,
    @Optional() @Inject(REDIS_LOCK_MODULE_METHOD) where?: string,
    @Optional() @Inject(HttpAdapterHost) http?: HttpAdapterHost,
  ) {
    const resolved = resolveModuleOptions(options, { needsRedis: backendFactory === undefined, where });
    const logger = neverThrowingLogger(new Logger('RedisLock'));
    warnIfLoadedLazily(http, where, logger);
    const backend = backendFactory === undefined ? redisBackend(resolved, logger) : backendFactory(resolved);
    this.backend = backend;
    try {
      this.manager = new LockManager(resolved, backend, logger);
    } catch (error) {
      // Refused (an option the topology cannot serve): Nest runs no shutdown hook for a provider
      // it could not create, so the connections just opened close here.
      backend.close();
      throw error;
    }
  }

  /**
   * Everything that happens to locks of this service: `acquired`, `renewed`, `released`,
   * `lost` and `not-acquired` events with key, fencing token and timing. Completes at shutdown.
   * Each subscription gets event objects of its own: a subscriber may change one (redact its key
   * for a log line) without changing what other subscribers or the diagnostics channels see.
   *
   * @example
   * ```ts
   * locks.events$.pipe(filter((e) => e.type === 'lost')).subscribe((e) => alert(e.key));
   * ```
   */
  get events$(): Observable<LockEvent> {
    return this.manager.events$;
  }

  /**
   * Acquires `key`, waiting up to `waitTimeout` (default 10 s) while another holder has it.
   * Inside a `using()` callback or `@Locked` method that already holds `key`, returns at once
   * without a Redis round trip (reentrancy per async call chain).
   *
   * @throws LockNotAcquiredError when the wait runs out (Redis unreachable included).
   * @throws LockKeyError / InvalidLockOptionsError for a bad key or option, before Redis is asked.
   * @example
   * ```ts
   * const lock = await locks.acquire('nightly-report', { ttl: 60_000, waitTimeout: 0 });
   * try { await buildReport(lock.signal); } finally { await lock.release(); }
   * ```
   */
  acquire(key: string, options?: LockOptions): Promise<Lock>;
  /**
   * Acquires `key` without a fencing token (`fencing: false`, see `FencingOptions`): in quorum
   * mode one round trip to the masters fewer when their counters differ.
   *
   * @example
   * ```ts
   * const lock = await locks.acquire('nightly-report', { fencing: false });
   * lock.fencingToken; // undefined
   * ```
   */
  acquire(key: string, options: UnfencedLockOptions): Promise<UnfencedLock>;
  /** `fencing` known only at run time: the lock may have no token. */
  acquire(key: string, options?: AnyLockOptions): Promise<Lock | UnfencedLock>;
  /**
   * Acquires several keys as one lock: all of them, or none (what was taken is given back when
   * the one `waitTimeout` runs out). Keys are taken in one canonical (sorted) order whatever
   * order they are given in, so callers locking overlapping keys never deadlock. The lock has
   * each key's fencing token in `fencingTokens`.
   *
   * @example
   * ```ts
   * const lock = await locks.acquire([`account:${from}`, `account:${to}`]);
   * try { await transfer(from, to, lock.fencingTokens); } finally { await lock.release(); }
   * ```
   */
  acquire(keys: readonly string[], options?: LockOptions): Promise<MultiKeyLock>;
  /** Several keys without fencing tokens (`fencing: false`). */
  acquire(keys: readonly string[], options: UnfencedLockOptions): Promise<UnfencedMultiKeyLock>;
  acquire(keys: readonly string[], options?: AnyLockOptions): Promise<MultiKeyLock | UnfencedMultiKeyLock>;
  acquire(key: string | readonly string[], options?: AnyLockOptions): Promise<Lock | UnfencedLock> {
    return this.manager.acquire(key, options);
  }

  /**
   * One attempt, no waiting: the lock, or `null` when another holder has it. Redis errors
   * reject as they are, as does a grant whose reply came after its lease had run out here (it
   * was given back: the key was free, not held by another). A `waitTimeout` other than 0 is
   * refused (`InvalidLockOptionsError`): to wait, call `acquire()`.
   *
   * @example
   * ```ts
   * const lock = await locks.tryAcquire('cron:cleanup');
   * if (!lock) return; // another instance runs it
   * ```
   */
  tryAcquire(key: string, options?: LockOptions): Promise<Lock | null>;
  /** One attempt without a fencing token (`fencing: false`). */
  tryAcquire(key: string, options: UnfencedLockOptions): Promise<UnfencedLock | null>;
  tryAcquire(key: string, options?: AnyLockOptions): Promise<Lock | UnfencedLock | null>;
  /**
   * One attempt at several keys (in canonical order): all of them, or `null` (after giving back
   * what was taken) when one is busy.
   *
   * @example
   * ```ts
   * const lock = await locks.tryAcquire(['seat:12A', 'seat:12B']);
   * if (!lock) return 'one of the seats is being booked';
   * ```
   */
  tryAcquire(keys: readonly string[], options?: LockOptions): Promise<MultiKeyLock | null>;
  tryAcquire(keys: readonly string[], options: UnfencedLockOptions): Promise<UnfencedMultiKeyLock | null>;
  tryAcquire(keys: readonly string[], options?: AnyLockOptions): Promise<MultiKeyLock | UnfencedMultiKeyLock | null>;
  tryAcquire(key: string | readonly string[], options?: AnyLockOptions): Promise<Lock | UnfencedLock | null> {
    let waitTimeout: unknown;
    try {
      waitTimeout = (options as { waitTimeout?: unknown } | null | undefined)?.waitTimeout;
    } catch (error) {
      // A getter's error, rejected as the call's refusal: this method returns a Promise.
      return Promise.reject(namingCall(unreadableOption(error, options, ['waitTimeout']), 'tryAcquire', key));
    }
    if (waitTimeout !== undefined && !waitsNothing(waitTimeout)) {
      // Dropped, it read as Redisson's tryLock(waitTime): "wait up to that, then null".
      return Promise.reject(
        new InvalidLockOptionsError(
          'waitTimeout',
          waitTimeout,
          'left out (or 0) in tryAcquire(), which makes one attempt and never waits: to wait, call acquire(key, { waitTimeout }), which rejects with LockNotAcquiredError when the wait runs out',
        ).within(describeCall('tryAcquire', key)),
      );
    }
    return this.manager.tryAcquire(key, options);
  }

  /**
   * Acquires `key`, runs `fn(lock)`, and releases the lock however `fn` ends. Returns what
   * `fn` returns and rethrows what it throws, unchanged. Inside `fn`, `current()` returns the
   * lock and nested acquisitions of `key` re-enter. An `fn` returning a generator or an
   * Observable is refused (`RedisLockError`): its work would run after the release; return
   * `lastValueFrom(observable)` instead.
   *
   * @example
   * ```ts
   * const balance = await locks.using(`account:${id}`, async (lock) => {
   *   const account = await repo.get(id);
   *   lock.signal.throwIfAborted();
   *   return repo.save({ ...account, balance: account.balance + amount });
   * });
   * ```
   */
  using<T>(key: string, fn: (lock: Lock) => T | Promise<T>, options?: LockOptions): Promise<T>;
  /** `using()` without a fencing token (`fencing: false`). */
  using<T>(key: string, fn: (lock: UnfencedLock) => T | Promise<T>, options: UnfencedLockOptions): Promise<T>;
  using<T>(key: string, fn: (lock: Lock | UnfencedLock) => T | Promise<T>, options?: AnyLockOptions): Promise<T>;
  /**
   * `using()` over several keys as one lock (see `acquire(keys)`). Inside `fn`, `current()`
   * returns the multi-key lock, `current(key)` the lock of one key, and nested acquisitions of
   * any of the keys re-enter.
   *
   * @example
   * ```ts
   * await locks.using([`account:${from}`, `account:${to}`], async (lock) => {
   *   await ledger.move(from, to, amount, lock.fencingTokens);
   * });
   * ```
   */
  using<T>(keys: readonly string[], fn: (lock: MultiKeyLock) => T | Promise<T>, options?: LockOptions): Promise<T>;
  using<T>(keys: readonly string[], fn: (lock: UnfencedMultiKeyLock) => T | Promise<T>, options: UnfencedLockOptions): Promise<T>;
  using<T>(keys: readonly string[], fn: (lock: MultiKeyLock | UnfencedMultiKeyLock) => T | Promise<T>, options?: AnyLockOptions): Promise<T>;
  using<T>(key: string | readonly string[], fn: (lock: never) => T | Promise<T>, options?: AnyLockOptions): Promise<T> {
    return this.manager.using(key as string, fn as (lock: Lock) => T | Promise<T>, options);
  }

  /**
   * Whether anyone holds `key` right now. Only a snapshot: use `tryAcquire()` to act on it.
   *
   * @example
   * ```ts
   * if (await locks.isLocked(`import:${tenant}`)) return 'an import is running';
   * ```
   */
  isLocked(key: string): Promise<boolean> {
    return this.manager.isLocked(key);
  }

  /**
   * Who holds `key` right now, and for how long, with how many waiting: read from Redis with
   * plain read-only commands (GET, PTTL, ZCARD; HGETALL and PTTL for the semaphore of that
   * name), so it works with a read-only ACL. The holder (host, pid, `instanceName`, `@Locked`
   * method or `label`, since when) is recorded in the lock's owner token when it is acquired, at
   * no extra cost. A semaphore in use (`limit`) is reported under `semaphore`: each holder with
   * its permits, the permits used, the limit and the waiters. In quorum mode, the majority's view.
   *
   * @example
   * ```ts
   * const { held, holder, ttlMs, waiters } = await locks.inspect('nightly-report');
   * if (held) console.log(`${holder?.label} on ${holder?.host}:${holder?.pid}, ${ttlMs} ms left, ${waiters} waiting`);
   * ```
   */
  inspect(key: string): Promise<LockInspection> {
    return this.manager.inspect(key);
  }

  /**
   * The lock the current async call chain holds through `using()` or `@Locked`: for `key`, or
   * the innermost one when no key is given. `undefined` outside such a chain, and in code the
   * chain started that runs after its `using()` or `@Locked` call released the lock (a timer,
   * a promise nobody awaited), a nested call that re-entered it included. The same object on
   * every call for one lock; for a lock taken with `fencing: false`, a view of it whose
   * `fencingToken` throws `NoFencingTokenError` (this method is typed `Lock`).
   *
   * @throws LockKeyError for a `key` no lock can have (not a string, empty, longer than 1024
   * characters, or holding a lone surrogate), as `isLocked()` and `inspect()` refuse it.
   *
   * @example
   * ```ts
   * @Locked('order:<0>')
   * async ship(orderId: string) {
   *   const { signal, fencingToken } = this.locks.current()!;
   *   await this.carrier.book(orderId, { signal, fencingToken });
   * }
   * ```
   */
  current(key?: string): Lock | undefined {
    const lock = this.manager.current(key);
    // Typed `Lock`: a lock taken with `fencing: false` must not hand out `undefined` as its token.
    return lock === undefined || lock.fencingToken !== undefined ? lock : withoutToken(lock);
  }

  /** @internal The engine `@Locked` methods run through. */
  get [LOCK_RUNNER](): LockRunner {
    return this.manager;
  }

  /**
   * @internal Called by Nest once every module initialised: the connections the module opens
   * connect now (or at a first lock call before). Nest runs no shutdown hook for a startup that
   * fails, so one that fails earlier (a provider's constructor or `onModuleInit`) leaves none open.
   */
  onApplicationBootstrap(): void {
    this.backend.start?.();
  }

  /**
   * @internal Called by Nest on `app.close()` before any `onApplicationShutdown()`, the phase in
   * which applications close the Redis clients they handed in: locks are given back while those
   * clients still work.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.manager.stop();
  }

  /** @internal Called by Nest on `app.close()`: closes only the connections the module opened. */
  async onApplicationShutdown(): Promise<void> {
    await this.manager.close();
  }
}

/** Whether a `waitTimeout` asks for no wait at all (`0`, `'0ms'`, `'0s'`...). */
function waitsNothing(waitTimeout: unknown): boolean {
  try {
    return toMilliseconds(waitTimeout, 'waitTimeout') === 0;
  } catch {
    return false;
  }
}
