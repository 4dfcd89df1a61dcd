import type { Duration } from '../time/duration.js';
import { quoteKey } from '../keys/quote-key.js';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import type { Lock } from '../../interfaces/lock.interface.js';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { LockTiming } from '../options/lock-options.js';
import { lockSummary, type LockSummary, INSPECT } from './lock-summary.js';

/**
 * The handle a nested acquisition gets when its call chain already holds the key. It shares
 * the outer lock's lease, token and signal; releasing it touches nothing in Redis, because the
 * outermost holder still runs and releases the lock when it ends.
 */
export class ReentrantLock implements Lock {
  private ended = false;
  /** A nested call with `fencing: false` gets no token, even from a fenced outer lock. */
  unfenced = false;

  /** @param outer the lock it shares (the outermost holder's, or a job's owner lease). */
  constructor(readonly outer: Lock) {}

  get key(): string {
    return this.outer.key;
  }

  get fencingToken(): number {
    return this.unfenced ? (undefined as unknown as number) : this.outer.fencingToken;
  }

  get signal(): AbortSignal {
    return this.outer.signal;
  }

  get held(): boolean {
    return !this.ended && this.outer.held;
  }

  /**
   * Released: over for its nested holder (the outer one may still hold the lock), and over too
   * once the outer lock was released (its call ended, or released it by hand) while the nested
   * work goes on: that work runs outside any lock, and `current()` must not name one for it.
   */
  get released(): boolean {
    return this.ended || (this.outer as { readonly released?: boolean }).released === true;
  }

  extend(ttl?: Duration): Promise<void> {
    if (this.ended) {
      return Promise.reject(new RedisLockError(`Lock ${quoteKey(this.key)} was released; acquire it again before extending it.`));
    }
    return this.outer.extend(ttl);
  }

  async release(): Promise<void> {
    this.ended = true;
  }

  /** Ends this nested handle at the end of its scope; the outer holder keeps the lock. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** What `JSON.stringify()` gives (a JSON logger handed the lock): see `LockSummary`. */
  toJSON(): LockSummary {
    return lockSummary(this);
  }

  /** What `console.log()` and `util.inspect()` print: the summary `toJSON()` gives. */
  [INSPECT](): LockSummary {
    return this.toJSON();
  }
}

/**
 * A nested acquisition gets a token only if it asked for one and the outer lock has one: an
 * unfenced call gets none, and a call that needs one cannot share an outer lock taken with
 * `fencing: false` (its type promises a number).
 */
export function matchFencing(reentered: Lock | undefined, timing: LockTiming): Lock | undefined {
  if (!(reentered instanceof ReentrantLock)) return reentered;
  if (timing.unfenced) reentered.unfenced = true;
  else if (reentered.fencingToken === undefined) {
    throw new InvalidLockOptionsError(
      'fencing',
      undefined,
      `false here: this call chain holds lock ${quoteKey(reentered.key)}, taken with fencing: false, and a nested acquisition that needs a fencing token cannot share it`,
    );
  }
  return reentered;
}
