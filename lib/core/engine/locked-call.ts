import type { Clock } from '../time/clock.js';
import { Observable, from, isObservable, type Subscription } from 'rxjs';
import { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import type { Lock } from '../../interfaces/lock.interface.js';
import type { AnyLockOptions } from '../../interfaces/redis-lock-options.interface.js';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { closeGenerator, isGenerator } from './generator-result.js';
import { quoteText } from '../keys/quote-key.js';
import { LockKeyError } from '../../errors/lock-key.error.js';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { UnsupportedLockKindError } from '../../errors/unsupported-lock-kind.error.js';
import type { LockLogger } from './lock-logger.js';
import type { LockEvent } from '../../interfaces/lock-event.interface.js';
import { HeldLock } from './held-lock.js';
import { ReentrantLock } from './reentrant-lock.js';
import { leaseLive } from './lease-deadline.js';
import { shownLock } from '../multi-key/shown-lock.js';

/** What a locked call does when the lock stays busy for the whole wait. */
export type OnBusy = 'throw' | 'skip';

/** The part of the lock engine a locked call needs. */
export interface LockRunner {
  readonly logger: LockLogger;
  acquire(key: string | readonly string[], options?: AnyLockOptions): Promise<Lock>;
  /**
   * `acquire` with callbacks, called from the engine's own `then` (one promise less per call);
   * a runner without it is called back from a `then` on `acquire`. Neither callback may throw.
   */
  acquireThen?(key: string | readonly string[], options: AnyLockOptions | undefined, onLock: (lock: Lock) => void, onFailed: (error: unknown) => void): void;
  /** Runs `fn` with `lock` as the chain's innermost lock. */
  runInChain<T>(lock: Lock, fn: () => T): T;
  /**
   * Runs `fn` outside any call chain: what it acquires never re-enters a lock the caller's chain
   * holds (or held, and lost). Absent: `fn` runs as it is.
   */
  outsideChain?<T>(fn: () => T): T;
  /**
   * Whether `lock` is still held; a lock whose lease deadline passed before the deadline
   * sweeper could run (a stalled event loop) is declared lost first.
   */
  stillHeld(lock: Lock): boolean;
  /** The ttl `lock` is renewed to, in milliseconds. */
  leaseOf(lock: Lock): number;
  /** The clock the engine's timers run on. */
  readonly clock: Clock;
  /** Whether anyone listens to lock events (spares building events nobody reads). */
  readonly listening: boolean;
  /** Emits a lock event on `events$` and its diagnostics channel. */
  emit(event: LockEvent): void;
  /** Aborted when the application shuts down (a nested handle's signal is not: its outer lock's is). */
  readonly closing?: AbortSignal;
  /** Shutdown of a job or a leader: tells the `using()` and `@Locked` calls running within `outer`'s locks. */
  interruptCallsWithin?(outer: readonly Lock[]): void;
}

export interface LockedCall {
  /** `Class.method`, for messages. */
  where: string;
  /** The decorated method (its wrapper): whether `@nestjs/schedule` runs it (see `lockedMethodScheduled`). */
  method?: Function;
  /** One key, or the keys of a multi-key lock. */
  key: string | readonly string[];
  options: AnyLockOptions | undefined;
  onBusy: OnBusy;
  invoke: () => unknown;
}

/**
 * `@Locked` methods that `@nestjs/schedule` runs in an application of this process, with the
 * decorator that schedules each (`@Interval()`): told by the scheduling explorer at startup.
 */
const scheduledMethods = new WeakMap<Function, string>();

/** Tells that `@nestjs/schedule` runs the `@Locked` method `method` (its wrapper) with `schedule` (`@Cron()`). */
export function lockedMethodScheduled(method: Function, schedule: string): void {
  scheduledMethods.set(method, schedule);
}

/**
 * Why a scheduled method's Observable never runs, and the remedy the startup's refusal of a
 * declared one gives: declaring the return type, the usual remedy, is refused for such a method,
 * and making it async leaves its work never running.
 */
export function neverSubscribed(schedule: string): string {
  return (
    `${schedule} awaits what the method returns and never subscribes to it: its work never runs on its schedule. ` +
    'Return lastValueFrom(...) of the Observable from an async method (declaring the return type as Observable is refused for a scheduled method), or call it from a scheduled method that subscribes.'
  );
}

/** The methods warned of returning an Observable their callers get in a Promise, per engine. */
const undeclaredWarned = new WeakMap<LockRunner, Set<string>>();

/**
 * The warning for a method whose Observable result, its return type undeclared, reaches its
 * callers in a Promise while its (inferred) type says Observable.
 */
export function undeclaredObservableWarning(method: string): string {
  return (
    `${method} returned an Observable, but its return type is not declared (inferred, imported with \`import type\`, or the build emits no decorator metadata): ` +
    'its callers get a Promise of the Observable where its type says Observable. Declare the return type `Observable<...>`, imported as a value ' +
    '(the lock is then taken at subscription), or make the method async.'
  );
}

function warnUndeclaredObservable(runner: LockRunner, call: LockedCall): void {
  let warned = undeclaredWarned.get(runner);
  if (warned === undefined) undeclaredWarned.set(runner, (warned = new Set()));
  if (warned.has(call.where)) return;
  warned.add(call.where);
  const schedule = call.method === undefined ? undefined : scheduledMethods.get(call.method);
  const method = `@Locked on ${call.where}`;
  runner.logger.warn(schedule === undefined ? undeclaredObservableWarning(method) : `${method} returned an Observable, and ${neverSubscribed(schedule)}`);
}

/**
 * Runs a method under a lock. A Promise (or plain value) result holds the lock until it
 * settles. A result that turns out to be an Observable holds it until the stream completes,
 * errors or is unsubscribed.
 */
export function runLockedAsync(runner: LockRunner, call: LockedCall): Promise<unknown> {
  // One promise settled by callbacks, not async functions or handlers that return promises:
  // every @Locked call comes this way, and each of those costs promises (more under the
  // AsyncLocalStorage the chain runs in).
  return new Promise((resolve, reject) => {
    const onLock = (lock: Lock): void => runHolding(runner, lock, call, resolve, reject);
    const onFailed = (error: unknown): void => (skips(call, error) ? resolve(undefined) : reject(namingCall(call, error)));
    if (runner.acquireThen !== undefined) runner.acquireThen(call.key, call.options, onLock, onFailed);
    else runner.acquire(call.key, call.options).then(onLock, onFailed);
  });
}

function runHolding(runner: LockRunner, lock: Lock, call: LockedCall, resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  // Nothing here may throw: a throw inside a `then` callback would reject a promise nobody awaits.
  let result: unknown;
  try {
    // A stall since the acquisition may have outlived the lease: the method must not start.
    if (!leaseLive(lock, runner.clock)) {
      if (overtaken(lock)) {
        // The handle ends (it touches nothing in Redis), then the call starts over.
        releaseThen(runner, lock, () => runLockedAsync(runner, call).then(resolve, reject), undefined);
        return;
      }
      throw lock.signal.reason;
    }
    result = runner.runInChain(lock, call.invoke);
    // A method declared to return an Observable runs at subscription (runLockedObservable): one
    // that returns one here had no readable type, inferred or imported with `import type`
    // (TypeScript emits `Object` for it, which the decorator cannot tell from a declared type).
    if (isObservable(result)) warnUndeclaredObservable(runner, call);
  } catch (error) {
    releaseThen(runner, lock, reject, error);
    return;
  }
  Promise.resolve(result).then(
    (value) => {
      try {
        // `next` first: a plain result (a DTO) has none, and costs no tag lookup.
        if (typeof (value as { next?: unknown } | null | undefined)?.next === 'function' && isGenerator(value)) {
          // A generator made by a method that is not one itself: its body has not run, and must not run unlocked.
          closeGenerator(value);
          releaseThen(runner, lock, reject, new RedisLockError(`@Locked on ${call.where}: the method returned a generator (or an iterator of a generator's shape, as a compiled generator method's), whose items come as it is iterated, after the lock was given back; return an array, a Promise or an Observable (held until it completes).`));
          return;
        }
        if (!isObservable(value)) {
          releaseThen(runner, lock, resolve, value);
          return;
        }
        resolve(holdWhileSubscribed(runner, lock, value, call));
      } catch (error) {
        releaseThen(runner, lock, reject, error);
      }
    },
    (error: unknown) => releaseThen(runner, lock, reject, error),
  );
}

/**
 * Releases `lock`, then settles the call with `outcome` however the release went (a failed
 * release is logged: the lease ends on its own). Never throws.
 */
function releaseThen(runner: LockRunner, lock: Lock, settle: (outcome: unknown) => void, outcome: unknown): void {
  const released = (): void => settle(outcome);
  const failed = (error: unknown): void => {
    warnReleaseFailed(runner, lock, error);
    settle(outcome);
  };
  try {
    // A held lock calls back from its own release `then`: one promise less per call.
    if (lock instanceof HeldLock) lock.releaseThen(released, failed);
    else lock.release().then(released, failed);
  } catch (error) {
    failed(error);
  }
}

/**
 * For methods declared to return an Observable: nothing happens until subscription; then the
 * lock is acquired, the method runs under it, and the lock is held until the stream
 * completes, errors or is unsubscribed. Unsubscribing while waiting cancels the wait.
 */
export function runLockedObservable(runner: LockRunner, call: LockedCall): Observable<unknown> {
  return new Observable((subscriber) => {
    const cancel = new AbortController();
    const signal = call.options?.signal ? AbortSignal.any([call.options.signal, cancel.signal]) : cancel.signal;
    let lock: Lock | undefined;
    let inner: Subscription | undefined;
    const options = { ...call.options, signal };
    const onLock = (acquired: Lock): void => {
      if (subscriber.closed) {
        void release(runner, acquired);
        return;
      }
      if (overtaken(acquired)) {
        void release(runner, acquired);
        runner.acquire(call.key, options).then(onLock, onFailed);
        return;
      }
      lock = acquired;
      try {
        if (!leaseLive(acquired, runner.clock)) throw acquired.signal.reason;
        inner = runner.runInChain(acquired, () => toObservable(call.invoke()).subscribe(subscriber));
      } catch (error) {
        subscriber.error(error);
      }
    };
    const onFailed = (error: unknown): void => {
      if (subscriber.closed) return;
      if (skips(call, error)) subscriber.complete();
      else subscriber.error(namingCall(call, error));
    };
    runner.acquire(call.key, options).then(onLock, onFailed);
    return () => {
      inner?.unsubscribe();
      if (lock) void release(runner, lock);
      else cancel.abort(new Error('unsubscribed while waiting for the lock'));
    };
  });
}

/**
 * An Observable result of a method not declared to return one: the lock was taken at call
 * time, so it is held from now until the stream ends. A stream nobody subscribes to would hold
 * it for ever (the watchdog renews it), so it is given back after the lock's ttl, and a later
 * subscription fails.
 */
function holdWhileSubscribed(runner: LockRunner, lock: Lock, source: Observable<unknown>, call: LockedCall): Observable<unknown> {
  let state: 'waiting' | 'subscribed' | 'expired' | 'ended' = 'waiting';
  const ttl = runner.leaseOf(lock);
  // The lock's signal aborts when it is lost or the application shuts down: nothing will run
  // under it, so the wait ends then too (its timer would outlive app.close()).
  const ended = (): void => {
    if (state !== 'waiting') return;
    state = 'ended';
    timer.cancel();
    // Both, whichever fired: a re-entered lock's signal is its outer lock's, which may never
    // abort, and would keep this call (its stream, what that captured) as long as that lock lives.
    stopListening();
    void release(runner, lock);
  };
  const stopListening = (): void => {
    lock.signal.removeEventListener('abort', ended);
    runner.closing?.removeEventListener('abort', ended);
  };
  const timer = runner.clock.setTimer(() => {
    if (state !== 'waiting') return;
    state = 'expired';
    stopListening();
    const schedule = call.method === undefined ? undefined : scheduledMethods.get(call.method);
    runner.logger.warn(
      `${call.where}: the Observable it returned was not subscribed within the lock's ttl (${ttl} ms); ${shownLock(lock)} released. ` +
        (schedule === undefined ? "Declare the method's return type as Observable to take the lock at subscription." : neverSubscribed(schedule)),
    );
    void release(runner, lock);
  }, ttl, true);
  lock.signal.addEventListener('abort', ended, { once: true });
  // A re-entered lock's signal is its outer lock's, which a normal release does not abort: the
  // wait ends at shutdown too, or its timer would outlive app.close().
  runner.closing?.addEventListener('abort', ended, { once: true });
  // A method that returned its Observable after the signal aborted (it stopped on it) would
  // never hear the event: the run ends now.
  if (lock.signal.aborted || runner.closing?.aborted === true) ended();
  return new Observable((subscriber) => {
    if (state !== 'waiting') {
      subscriber.error(
        new RedisLockError(
          `${call.where}: its Observable was subscribed ${WHEN_LATE[state]}; call the method again.`,
        ),
      );
      return;
    }
    state = 'subscribed';
    timer.cancel();
    stopListening();
    if (!leaseLive(lock, runner.clock)) {
      // A re-entered lock whose outer lock was released normally has no reason of its own.
      subscriber.error(lock.signal.reason ?? new RedisLockError(`${call.where}: its Observable was subscribed ${WHEN_LATE.ended}; call the method again.`));
      void release(runner, lock);
      return;
    }
    const inner = runner.runInChain(lock, () => source.subscribe(subscriber));
    return () => {
      inner.unsubscribe();
      void release(runner, lock);
    };
  });
}

/** Why a subscription came too late, by the state it found. */
const WHEN_LATE = {
  expired: "after the lock's ttl, when its lock had been released",
  ended: 'after its lock had ended (lost, or the application shut down)',
  // The first subscription may be running still: its lock is held for it, not released.
  subscribed: "a second time: its lock is its first subscription's, held while that one lasts",
} as const;

/**
 * A key the arguments made too long, or not well-formed, is refused by the engine, whose message
 * knows neither the method nor its template: said here, on the failure path only.
 */
function namingCall(call: LockedCall, error: unknown): unknown {
  // Every option of a @Locked call is the decorator's own: the method is what to fix, whatever
  // the module it meets (a renewInterval above the module's ttl, a semaphore in quorum mode).
  if (error instanceof InvalidLockOptionsError && error.where === undefined) return error.within(`@Locked on ${call.where}`);
  if (error instanceof UnsupportedLockKindError && !error.message.startsWith('@Locked')) return new UnsupportedLockKindError(`@Locked on ${call.where}: ${error.message}`);
  if (!(error instanceof LockKeyError) || error.message.startsWith('@Locked')) return error;
  const template = call.options?.name;
  return new LockKeyError(`@Locked on ${call.where}${template === undefined ? '' : ` (key template ${quoteText(template, 200)})`}: ${error.message}`);
}

/**
 * A re-entry of a lock its outer call released (normally: its signal not aborted) between the
 * grant and the start of the nested call, which is handed it a microtask later: the nested call
 * outlives the outer lock from its start, and takes the key afresh, as such work does from then
 * on (a re-entry skips a released lock). A lost outer lock is not overtaken: its loss is thrown.
 * A multi-key call checks its parts once all are taken (see `acquireAll`), and takes a released
 * one afresh there.
 */
function overtaken(lock: Lock): boolean {
  return lock instanceof ReentrantLock && lock.released && !lock.signal.aborted;
}

/** `onBusy: 'skip'` skips a lock another holder kept, never one Redis could not be asked for. */
function skips(call: LockedCall, error: unknown): boolean {
  return call.onBusy === 'skip' && error instanceof LockNotAcquiredError && error.cause === undefined;
}

function toObservable(value: unknown): Observable<unknown> {
  if (isObservable(value)) return value;
  return from(Promise.resolve(value));
}

function release(runner: LockRunner, lock: Lock): Promise<void> {
  return lock.release().catch((error: unknown) => warnReleaseFailed(runner, lock, error));
}

/** Never throws (its callers settle the call after it): any rejection reason, any logger. */
function warnReleaseFailed(runner: LockRunner, lock: Lock, error: unknown): void {
  const reason = error instanceof Error ? error.message : String(error);
  try {
    runner.logger.warn(`Release of ${shownLock(lock)} failed (${reason}); its lease will expire on its own.`);
  } catch {
    // A logger that throws cannot be told either; the lease still ends on its own.
  }
}
