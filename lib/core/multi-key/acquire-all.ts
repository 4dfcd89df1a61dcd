import type { Lock } from '../../interfaces/lock.interface.js';
import type { AnyLockOptions } from '../../interfaces/redis-lock-options.interface.js';
import type { Clock } from '../time/clock.js';
import type { LockLogger } from '../engine/lock-logger.js';
import { quoteKey } from '../keys/quote-key.js';
import { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import { LockLostError } from '../../errors/lock-lost.error.js';
import { rejectedWithChain } from '../engine/wait-ends-with-chain.js';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { shutdownReason } from '../../errors/shutdown-reason.js';
import { HeldLock } from '../engine/held-lock.js';
import { MultiLock } from './multi-key-lock.js';
import { withCallSince } from '../engine/call-since.js';
import { publishMultiKeyLock } from '../engine/lock-diagnostics.js';
import type { LockNotAcquiredOutcome } from '../../interfaces/lock-event.interface.js';
import { settleWithin } from '../time/settle-within.js';
import { LAST_ATTEMPT_GRACE_MS } from '../engine/waiter-timing.js';

/** The single-key engine a multi-key lock is built on. */
export interface SingleKeyLocks {
  readonly clock: Clock;
  readonly logger: LockLogger;
  /**
   * `acquire` of one key of a multi-key call that began at `calledAt`: its `waitTimeout` counts
   * from then, and so do the `waitedMs` of its error and events.
   */
  acquirePart(key: string, options: AnyLockOptions | undefined, calledAt: number): Promise<Lock>;
  tryAcquire(key: string, options?: AnyLockOptions): Promise<Lock | null>;
  /**
   * Throws what taking `key` would throw at once, without asking Redis (a read lock of the chain
   * asked for as a writer, another semaphore limit, an outer lock lost, `fencing` mismatched).
   */
  checkPart?(key: string, options: AnyLockOptions | undefined): void;
}

/**
 * Every key's own refusal, before any key is taken: a later key's (an upgrade from the read lock
 * the chain holds, say) must not wait the whole waitTimeout on an earlier busy key, nor take it
 * from its waiters only to give it back.
 */
function checkParts(locks: SingleKeyLocks, keys: readonly string[], options: AnyLockOptions | undefined): void {
  if (locks.checkPart === undefined) return;
  for (const key of keys) locks.checkPart(key, options);
}

/**
 * Takes `keys` (already in canonical order) one after another, all within one `waitTimeout`
 * from now. If one cannot be had (the wait ran out, an abort, an error), what was taken is
 * given back before the call fails: all or nothing. A key lost while the call waited for a later
 * one (its renewal refused) is not handed out inside the lock: everything is given back and
 * taken again in order (taking the lost key again while holding later ones could deadlock),
 * within the same wait; one whose renewal Redis refused for good ends the call with that refusal
 * once the later key is had, or its wait is over; one the application's shutdown gave back ends
 * it as shutdown ends a wait.
 */
export async function acquireAll(locks: SingleKeyLocks, keys: readonly string[], options: AnyLockOptions | undefined, waitTimeout: number): Promise<MultiLock> {
  checkParts(locks, keys, options);
  const startedAt = locks.clock.now();
  const deadline = startedAt + waitTimeout;
  const parts = withCallSince(options, Date.now(), keys);
  for (;;) {
    const taken: Lock[] = [];
    const refusal = new RefusalWatch(parts);
    try {
      for (const key of keys) {
        // Each key's wait counts from the call's start, so the whole call never waits longer, and
        // a refusal says how long the call waited, not the last key alone.
        const lock = await locks.acquirePart(key, refusal.options, startedAt);
        taken.push(lock);
        if (taken.some((part) => !part.held)) break;
        refusal.watch(lock);
      }
    } catch (error) {
      const outcome = outcomeOf(error, options, waitTimeout);
      // A later key's wait ran out (or failed) after a key taken first was refused for good: that
      // refusal is what to fix, not the later key busy. The caller's abort stays the caller's.
      const refused = outcome === 'aborted' ? undefined : firstRefusedForGood(taken);
      refusal.stop();
      await giveBack(locks, taken);
      notAcquiredWhole(locks, options, startedAt, refused === undefined ? outcome : 'error');
      throw refused ?? error;
    }
    refusal.stop();
    const lost = taken.find((lock) => !lock.held);
    if (lost === undefined) return new MultiLock(taken, { clock: locks.clock, name: options?.name, calledAt: startedAt });
    await giveBack(locks, taken);
    // Asking again changes nothing: the call ends now, whatever wait is left, saying what to fix,
    // or that the application is closing.
    const ended = refusedForGood(lost) ?? endedByShutdown(taken, locks.clock.now() - startedAt);
    if (ended !== undefined) {
      notAcquiredWhole(locks, options, startedAt, 'error');
      throw ended;
    }
    if (locks.clock.now() >= deadline) {
      const error = notAcquired(lost, locks.clock.now() - startedAt, waitTimeout);
      // The call's own key lost, not a lock of its chain: a busy lock, or Redis (see notAcquired).
      notAcquiredWhole(locks, options, startedAt, error.cause !== undefined ? 'error' : waitTimeout > 0 ? 'timeout' : 'busy');
      throw error;
    }
  }
}

/**
 * Ends a round's wait for its later keys once a key it took first is refused for good (see
 * `refusedForGood`): asking again cannot change that refusal, so the call must not go on waiting
 * for a key another caller holds (with no bound, as long as that caller keeps it). `options`
 * carries the call's own signal and this one's; the wait it ends rejects, and the round's catch
 * says the refusal. Only the keys after the first wait with it.
 */
class RefusalWatch {
  private readonly controller = new AbortController();
  private readonly watched: { lock: Lock; listener: () => void }[] = [];
  private readonly parts: AnyLockOptions;
  private combined: AnyLockOptions | undefined;

  constructor(parts: AnyLockOptions) {
    this.parts = parts;
  }

  /** The options of the round's next key: the call's own until a key is taken, then with this watch's signal too. */
  get options(): AnyLockOptions {
    if (this.watched.length === 0) return this.parts;
    const own = this.parts.signal;
    this.combined ??= { ...this.parts, signal: own === undefined ? this.controller.signal : AbortSignal.any([own, this.controller.signal]) };
    return this.combined;
  }

  watch(lock: Lock): void {
    const listener = () => {
      const refused = refusedForGood(lock);
      if (refused !== undefined) this.controller.abort(refused);
    };
    lock.signal.addEventListener('abort', listener, { once: true });
    this.watched.push({ lock, listener });
  }

  stop(): void {
    for (const { lock, listener } of this.watched.splice(0)) lock.signal.removeEventListener('abort', listener);
  }
}

/**
 * Why a multi-key call did not get its lock, from what one key's acquisition rejected with, as
 * that key's `not-acquired` event says it (`Acquisition.giveUp`): the caller's abort or the end of
 * a lock the call waited within, a busy key (`timeout` when the call could wait), else Redis or
 * the service (a refusal with a cause).
 */
function outcomeOf(error: unknown, options: AnyLockOptions | undefined, waitTimeout: number): LockNotAcquiredOutcome {
  if ((options?.signal?.aborted === true && error === options.signal.reason) || rejectedWithChain(error)) return 'aborted';
  if (error instanceof LockNotAcquiredError && error.cause === undefined) return waitTimeout > 0 ? 'timeout' : 'busy';
  return 'error';
}

/** Tells the lock metrics that a multi-key call ended without its lock (one outcome for the call; see MULTI_KEY_LOCK_CHANNEL). */
function notAcquiredWhole(locks: SingleKeyLocks, options: AnyLockOptions | undefined, startedAt: number, outcome: LockNotAcquiredOutcome): void {
  publishMultiKeyLock(() => ({ type: 'not-acquired', lock: {}, name: options?.name, waitedMs: locks.clock.now() - startedAt, outcome }));
}

/**
 * The error that ends a multi-key call whose part `lost`, taken before its other keys, Redis
 * refused to renew in a way asking again cannot change (an ACL changed under the application:
 * NOPERM; a client handed in that its owner closed; see `LockLostError`): a `RedisLockError`
 * saying what to fix, as one key's acquire refused so rejects (a 500 over HTTP, logged), not a
 * busy lock (`LockNotAcquiredError` without a cause: 409, retried later, never fixed). Its cause is
 * the part's loss, whose own cause is Redis' refusal. Undefined for any other loss.
 */
function refusedForGood(lost: Lock): RedisLockError | undefined {
  // A key the call re-entered is a lock of its chain: its loss ends the call as such (see `LockManager.reenter`).
  if (!(lost instanceof HeldLock)) return undefined;
  const loss: unknown = lost.signal.reason;
  if (!(loss instanceof LockLostError) || loss.reason !== 'refused' || !(loss.cause instanceof RedisLockError)) return undefined;
  return new RedisLockError(
    `Lock ${quoteKey(lost.key)} could not be acquired: the call took it, then Redis refused its renewal for good while the call took its other keys; every key was given back (${loss.cause.message.replace(/\.$/, '')}).`,
    { cause: loss },
  );
}

/**
 * The error that ends a multi-key call one of whose parts `taken` the application's shutdown gave
 * back (the close began as the call took its last key): the one a wait that shutdown ends rejects
 * with, one key's as a multi-key call's (a `LockNotAcquiredError` whose cause is the
 * `LockServiceClosedError`: 503 over HTTP, no `Retry-After`), not a part lost to Redis (its
 * `LockLostError` the cause: Redis unavailable, asked again later), nor a lease run out.
 * Undefined when no part was lost so.
 */
function endedByShutdown(taken: readonly Lock[], waitedMs: number): LockNotAcquiredError | undefined {
  const lost = taken.find((part) => !part.held && part.signal.reason instanceof LockLostError && part.signal.reason.reason === 'shutdown');
  return lost && new LockNotAcquiredError(lost.key, waitedMs, { cause: shutdownReason() });
}

/** `refusedForGood` of the first part taken that Redis refused to renew for good, if any. */
function firstRefusedForGood(taken: readonly Lock[]): RedisLockError | undefined {
  for (const part of taken) {
    const refused = refusedForGood(part);
    if (refused !== undefined) return refused;
  }
  return undefined;
}

/**
 * The wait ended with a part lost while the call waited for another. Refused (the key was taken
 * by someone else: deleted, evicted, released by force) is a busy lock, as `LockNotAcquiredError`
 * without a cause says (HTTP 409); a lease that ran out unrenewed, or shutdown, is Redis or the
 * service not answering, its loss the cause (HTTP 503). A refusal for good ended the call before
 * (see `refusedForGood`).
 */
function notAcquired(lost: Lock, waitedMs: number, waitTimeout: number): LockNotAcquiredError {
  const loss = lost.signal.reason;
  // The call's waitTimeout, as a single key's refusal names it: no wait asked, or the one that ran out.
  if (loss instanceof LockLostError && loss.reason === 'refused') return new LockNotAcquiredError(lost.key, waitedMs, undefined, waitTimeout);
  return new LockNotAcquiredError(lost.key, waitedMs, { cause: loss }, waitTimeout);
}

/**
 * One attempt per key, in canonical order; `null` (after giving back what was taken) at the first
 * busy key, or once a part taken earlier is lost to another holder (its renewal refused). A part
 * whose lease ran out here during a stall while later keys were tried is no other holder's: that
 * rejects, as one key's attempt does whose reply came after its lease; so does a part whose
 * renewal Redis refused for good (see `refusedForGood`), and one the application's shutdown gave
 * back (see `endedByShutdown`).
 */
export async function tryAcquireAll(locks: SingleKeyLocks, keys: readonly string[], options: AnyLockOptions | undefined): Promise<MultiLock | null> {
  checkParts(locks, keys, options);
  const startedAt = locks.clock.now();
  const parts = withCallSince(options, Date.now(), keys);
  const taken: Lock[] = [];
  // Whether the call gave up (a busy key, or a part taken earlier lost): handled past the catch,
  // which gives back what was taken for an error thrown here, so that each key is given back once.
  let gaveUp = false;
  try {
    for (const key of keys) {
      const lock = await locks.tryAcquire(key, parts);
      if (lock !== null) taken.push(lock);
      if (lock === null || taken.some((part) => !part.held)) {
        gaveUp = true;
        break;
      }
    }
  } catch (error) {
    await giveBack(locks, taken);
    notAcquiredWhole(locks, options, startedAt, outcomeOf(error, options, 0));
    throw error;
  }
  if (gaveUp) {
    const lost = taken.find((part) => !part.held);
    await giveBack(locks, taken);
    const ended = lost && (refusedForGood(lost) ?? endedByShutdown(taken, locks.clock.now() - startedAt));
    const reason = lost?.signal.reason;
    const error =
      ended ??
      (reason instanceof LockLostError && reason.reason !== 'refused'
        ? new RedisLockError(`Lock ${quoteKey(lost!.key)}, taken first, ran out of its lease (${reason.reason}) before the other keys were taken; every key was given back.`, { cause: reason })
        : undefined);
    notAcquiredWhole(locks, options, startedAt, error === undefined ? 'busy' : 'error');
    if (error !== undefined) throw error;
    return null;
  }
  return new MultiLock(taken, { clock: locks.clock, name: options?.name, calledAt: startedAt });
}

/**
 * Releases in reverse order; a failed release only costs its lease (it expires on its own). The
 * failed call waits for them a last attempt's grace at most: a release Redis does not answer
 * waits until its lease ends, and would hold the caller's abort or waitTimeout that long. They
 * go on without it, and free the keys once Redis answers.
 */
async function giveBack(locks: SingleKeyLocks, taken: Lock[]): Promise<void> {
  const released = Promise.allSettled(taken.reverse().map((lock) => lock.release())).then((outcomes) => {
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'rejected') {
        locks.logger.warn(`Release of lock ${quoteKey(taken[i]!.key)} failed (${(outcome.reason as Error).message}); its lease will expire on its own.`);
      }
    });
  });
  await settleWithin(released, LAST_ATTEMPT_GRACE_MS, [], locks.clock);
}
