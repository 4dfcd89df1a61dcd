import type { Duration } from '../time/duration.js';
import type { Lock, MultiKeyLock } from '../../interfaces/lock.interface.js';
import { followSignal } from '../engine/follow-signal.js';
import { LockLostError } from '../../errors/lock-lost.error.js';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { shownKeys } from '../keys/shown-keys.js';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { multiKeyLockSummary, type MultiKeyLockSummary, INSPECT } from '../engine/lock-summary.js';
import { HeldLock } from '../engine/held-lock.js';
import { publishMultiKeyLock } from '../engine/lock-diagnostics.js';
import type { Clock } from '../time/clock.js';

/** How a multi-key lock tells the lock metrics of itself as one lock (see `MULTI_KEY_LOCK_CHANNEL`). */
export interface WholeLockTelling {
  readonly clock: Clock;
  readonly name: string | undefined;
  /** When the call began, on `clock`: its `waitedMs` counts from then. */
  readonly calledAt: number;
}

/**
 * Several locks held as one: all were acquired (in canonical key order) or none is held. Its
 * `signal` aborts as soon as any part is lost, with that part's `LockLostError`.
 */
export class MultiLock implements MultiKeyLock {
  readonly keys: readonly string[];
  readonly fencingTokens: Readonly<Record<string, number>>;
  readonly signal: AbortSignal;
  private readonly lost = new AbortController();
  private readonly unwatch: (() => void)[] = [];
  /**
   * Told to the lock metrics as acquired, not yet as released or lost (with when): undefined
   * when every key re-entered a lock of the chain, which takes nothing, as one key's reentry.
   */
  private telling?: { readonly clock: Clock; readonly name: string | undefined; readonly acquiredAt: number };

  constructor(
    /** The parts, in canonical key order. */
    readonly parts: readonly Lock[],
    tell?: WholeLockTelling,
  ) {
    this.keys = Object.freeze(parts.map((part) => part.key));
    // Taken with `fencing: false` (every part alike): no tokens, as `UnfencedMultiKeyLock` says.
    this.fencingTokens = parts[0]!.fencingToken === undefined ? (undefined as unknown as Record<string, number>) : tokensByKey(parts);
    // A part that re-enters a lock of the chain has that outer lock's signal (see followSignal).
    this.signal = this.lost.signal;
    for (const part of parts) {
      // Its own key's loss, heard also once the signal aborted (a shutdown, an outer lock's step-down).
      if (part instanceof HeldLock) this.unwatch.push(part.joinWholeLock((loss) => this.keyLost(loss)));
      this.unwatch.push(followSignal(part.signal, this.lost));
    }
    this.signal.addEventListener('abort', () => this.signalAborted(), { once: true });
    if (tell !== undefined && parts.some((part) => part instanceof HeldLock)) {
      const acquiredAt = tell.clock.now();
      this.telling = { clock: tell.clock, name: tell.name, acquiredAt };
      // The keys its parts' events carry: the health indicator tells by them a part lost while the
      // lock is held from one lost while its call took the others (a re-entered key emits nothing).
      const keys = parts.find((part): part is HeldLock => part instanceof HeldLock)?.keys;
      publishMultiKeyLock(() => ({ type: 'acquired', lock: this, name: tell.name, waitedMs: acquiredAt - tell.calledAt, keys }));
    }
  }

  /**
   * A part's real loss ends the lock. A shutdown's or a step-down's signal is none: the locks stay
   * held while the code winds down, and a call that ends then releases them, as one key's does (a
   * key the shutdown gives back is told by `partLost`).
   */
  private toldLost(): void {
    const reason: unknown = this.signal.reason;
    if (isRealLoss(reason)) this.toldEnded(reason);
  }

  /**
   * Tells the lock metrics that this lock ended, once: released, or lost (a part's `refused` or
   * `expired` loss, or a key the shutdown gave back, as one key's `lost` event says).
   */
  private toldEnded(lost?: LockLostError): void {
    const telling = this.telling;
    if (telling === undefined) return;
    this.telling = undefined;
    const heldMs = telling.clock.now() - telling.acquiredAt;
    publishMultiKeyLock(() => (lost === undefined ? { type: 'released', lock: this, name: telling.name, heldMs } : { type: 'lost', lock: this, name: telling.name, heldMs, reason: lost.reason }));
  }

  /** A part's own loss (not its signal's abort by a shutdown or a step-down, which keeps the key held). */
  private keyLost(loss: LockLostError): void {
    // A key the shutdown gave back under the lock (held past the running calls' wait, or taken
    // with acquire()): the lock ended so, as one key's does; the shutdown gives the others back too.
    if (loss.reason === 'shutdown') {
      if (!this.releasing) this.toldEnded(loss);
      return;
    }
    this.partLost(loss);
  }

  private signalAborted(): void {
    this.toldLost();
    const reason: unknown = this.signal.reason;
    if (reason instanceof LockLostError) this.partLost(reason);
  }

  /** A part's real loss (`refused`, `expired`), once it ended the lock: see `partLost`. */
  private wholeLoss?: LockLostError;

  /**
   * A part is gone from Redis (`refused`, `expired`): the lock is lost, so the other parts are given
   * back at once, owner-checked, as `release()` would. Their watchdogs would otherwise keep keys
   * nobody holds by the API's account locked against everyone for as long as the holder's code
   * runs, or for ever after an `acquire()` caller dropped a lock it was told is lost. Not at a
   * shutdown or a leader's step-down, whose signals tell the code to stop while its locks stay
   * held: the parts are still watched then, and a real loss of one later (heard from the part, its
   * signal aborted already by the shutdown, or the signal of a part re-entering an outer lock by
   * that lock's step-down) ends the lock as it would have before.
   */
  private partLost(loss: LockLostError): void {
    if (this.wholeLoss !== undefined || this.releasing || !isRealLoss(loss)) return;
    this.wholeLoss = loss;
    // Told once: a signal aborted by the loss itself told it already, a shutdown's told the end.
    this.toldEnded(loss);
    this.stopWatching();
    for (const part of this.parts) if (part.held) part.release().catch(() => undefined);
  }

  private stopWatching(): void {
    for (const unwatch of this.unwatch.splice(0)) unwatch();
  }

  /**
   * The real loss that ended the lock as a whole, if any: a key is gone from Redis (`refused`,
   * `expired`), and `partLost` gave the others back. A nested call of one of those finds no lock
   * of the chain to re-enter, yet the chain's code works without the lock: it must fail with this
   * loss, as one of the lost key does (see `LockManager.reenter`), not take the key afresh. Not
   * the signal's reason, which a shutdown or an outer lock's step-down may have set first: those
   * say the keys stay held.
   */
  get loss(): LockLostError | undefined {
    const reason: unknown = this.signal.reason;
    return this.wholeLoss ?? (isRealLoss(reason) ? reason : undefined);
  }

  /** The first key in canonical order. */
  get key(): string {
    return this.parts[0]!.key;
  }

  /** The fencing token of the first key in canonical order; `fencingTokens` has every key's. */
  get fencingToken(): number {
    return this.parts[0]!.fencingToken;
  }

  get held(): boolean {
    // Every part asked (no early return): each reports a lease that ran out during a stall.
    let held = true;
    for (const part of this.parts) held = part.held && held;
    return held;
  }

  async extend(ttl?: Duration): Promise<void> {
    // Lost as a whole, its other keys given back (see partLost): the loss, as one key's extend()
    // rejects with it, not the refusal of a key given back ("released"), which the caller never released.
    if (this.loss !== undefined) throw this.loss;
    const releasedBefore = this.releasing;
    try {
      await Promise.all(this.parts.map((part) => part.extend(ttl)));
    } catch (error) {
      if (this.loss !== undefined) throw this.loss;
      // Each part refuses a bad ttl before it sends anything: named as the call made, on this lock.
      if (error instanceof InvalidLockOptionsError) throw error.within(`extend(ttl) of the lock of keys ${shownKeys(this.keys)}`);
      // Its holder released it (before, or while the extension was on its way): the lock it
      // released, by its keys, not the part that answered first, a lock the caller never took.
      if (this.releasing) {
        throw new RedisLockError(
          releasedBefore
            ? `The lock of keys ${shownKeys(this.keys)} was released; acquire it again before extending it.`
            : `The lock of keys ${shownKeys(this.keys)} was released while extend() waited for its answer: the extension no longer applies.`,
        );
      }
      throw error;
    }
  }

  private releasing = false;

  /** Released, or being released: over for its holder, as `HeldLock.released` says of one key. */
  get released(): boolean {
    return this.releasing;
  }

  /**
   * Releases every part (in reverse order), even if one release fails; then rethrows the first
   * failure. A part its release found gone from Redis (deleted, evicted, released by force) ends
   * the lock as lost, its signal aborted with that part's loss, as one key's release that finds
   * it so does.
   */
  async release(): Promise<void> {
    this.releasing = true;
    this.stopWatching();
    const outcomes = await Promise.allSettled([...this.parts].reverse().map((part) => part.release()));
    const lost = this.parts.map((part): unknown => part.signal.reason).find(isRealLoss);
    this.toldEnded(lost);
    // As one key's release that finds it gone aborts that lock's signal: what still listens hears the loss.
    if (lost !== undefined) this.lost.abort(lost);
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** What `JSON.stringify()` gives (a JSON logger handed the lock): see `LockSummary`. */
  toJSON(): MultiKeyLockSummary {
    return multiKeyLockSummary(this);
  }

  /** What `console.log()` and `util.inspect()` print: the summary `toJSON()` gives. */
  [INSPECT](): MultiKeyLockSummary {
    return this.toJSON();
  }
}

/** A key gone from Redis (`refused`, `expired`), not a shutdown's or a step-down's signal. */
function isRealLoss(reason: unknown): reason is LockLostError {
  return reason instanceof LockLostError && (reason.reason === 'refused' || reason.reason === 'expired');
}

/**
 * Each part's token under its key, in an object without a prototype: a key the lock does not hold
 * (`toString`, `constructor`) reads `undefined`, not a method every object inherits, and a key
 * named `__proto__` is stored like any other (on an object it would set the prototype).
 */
function tokensByKey(parts: readonly Lock[]): Readonly<Record<string, number>> {
  const tokens: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const part of parts) tokens[part.key] = part.fencingToken;
  return Object.freeze(tokens);
}
