import type { MultiKeyLockOutcome } from '../core/engine/lock-diagnostics.js';
import type { LockEvent } from '../interfaces/lock-event.interface.js';

/** How far back `locksLostRecently` counts. */
export const LOST_WINDOW_MS = 5 * 60_000;
/** How far back renewal latencies count. */
export const RENEWAL_WINDOW_MS = 60_000;

const SECOND_MS = 1_000;

/**
 * One counter per second over a window, in a ring: memory is fixed by the window, not by the
 * rate of events, and every second of the window is covered whatever the rate.
 */
class SecondBuckets {
  private readonly seconds: Float64Array;
  private readonly counts: Float64Array;
  private readonly maxima: Float64Array;

  constructor(private readonly windowMs: number) {
    const size = Math.ceil(windowMs / SECOND_MS) + 1;
    this.seconds = new Float64Array(size).fill(-1);
    this.counts = new Float64Array(size);
    this.maxima = new Float64Array(size);
  }

  add(at: number, value = 0): void {
    const second = Math.floor(at / SECOND_MS);
    const slot = second % this.seconds.length;
    const current = this.seconds[slot]!;
    if (second < current) return; // older than what the slot holds now: out of the window
    if (second > current) {
      this.seconds[slot] = second;
      this.counts[slot] = 0;
      this.maxima[slot] = value;
    }
    this.counts[slot]! += 1;
    if (value > this.maxima[slot]!) this.maxima[slot] = value;
  }

  /** The count and the largest value of the seconds in the window ending at `now`. */
  sum(now: number): { count: number; max: number } {
    const first = Math.floor((now - this.windowMs) / SECOND_MS);
    const last = Math.floor(now / SECOND_MS);
    let count = 0;
    let max = 0;
    for (let slot = 0; slot < this.seconds.length; slot++) {
      const second = this.seconds[slot]!;
      if (second < first || second > last) continue;
      count += this.counts[slot]!;
      if (this.maxima[slot]! > max) max = this.maxima[slot]!;
    }
    return { count, max };
  }
}

/**
 * Renewal latencies and losses of the last minutes, from a `LockService`'s events, counted per
 * second: a process renewing thousands of locks a second has its whole minute counted, in
 * memory that does not grow with the rate.
 */
export class LockHealthStats {
  private readonly renewals = new SecondBuckets(RENEWAL_WINDOW_MS);
  private readonly losses = new SecondBuckets(LOST_WINDOW_MS);
  private last?: { at: number; latencyMs: number };
  /** The keys held now of each multi-key lock (told apart by its `keys`, one array per call). */
  private readonly parts = new WeakMap<readonly string[], Set<string>>();
  /** Multi-key locks whose loss was counted: their other keys' losses are the same one. */
  private readonly lostWholes = new WeakSet<readonly string[]>();
  /**
   * Multi-key locks their callers got (all their keys taken or re-entered), by their keys' events'
   * `keys`: told by the engine (`recordWhole`), since a key the call re-enters (an outer
   * `using()`'s, a leader's term) emits no `acquired`, and the keys seen taken cannot say it.
   */
  private readonly wholes = new WeakSet<readonly string[]>();

  /**
   * Counts `event` at `at`, by default the monotonic clock as it arrives: not the event's own
   * `at` (the wall clock), which a step of the system clock (a VM resumed, an NTP correction)
   * would move out of the window, dropping a loss from the count.
   */
  record(event: LockEvent, at = performance.now()): void {
    if (event.type === 'renewed') {
      this.renewals.add(at, event.latencyMs);
      if (this.last === undefined || at >= this.last.at) this.last = { at, latencyMs: event.latencyMs };
    }
    else if (event.type === 'acquired' && event.keys !== undefined) this.partsOf(event.keys).add(event.key);
    else if (event.type === 'released' && event.keys !== undefined) this.parts.get(event.keys)?.delete(event.key);
    // A lock given back at shutdown was not lost to a failure.
    else if (event.type === 'lost' && this.lostWhole(event) && event.reason !== 'shutdown') this.losses.add(at);
  }

  /** What became of a multi-key lock as a whole (`MULTI_KEY_LOCK_CHANNEL`): its caller got it. */
  recordWhole(message: MultiKeyLockOutcome): void {
    if (message.type === 'acquired' && message.keys !== undefined) this.wholes.add(message.keys);
  }

  /**
   * Whether a `lost` event is a lock's loss as its caller sees it, once for a multi-key lock
   * (its events come per key): not a key lost while the call waited for a later key, which the
   * call takes again within its wait. A key whose acquisition was not seen (before the first
   * check) counts, as a lock of one key does.
   */
  private lostWhole(event: { key: string; keys?: readonly string[] }): boolean {
    if (event.keys === undefined) return true;
    const held = this.parts.get(event.keys);
    // Not counted by the keys seen taken: a key re-entered is never seen, and the lock is had without it.
    const waiting = held !== undefined && held.has(event.key) && !this.wholes.has(event.keys);
    held?.delete(event.key);
    if (waiting || this.lostWholes.has(event.keys)) return false;
    this.lostWholes.add(event.keys);
    return true;
  }

  private partsOf(keys: readonly string[]): Set<string> {
    let held = this.parts.get(keys);
    if (held === undefined) this.parts.set(keys, (held = new Set()));
    return held;
  }

  /** Renewal round trips of the last minute (per whole second), in milliseconds (undefined without any). */
  renewalLatency(now = performance.now()): { lastMs: number; maxMs: number; count: number } | undefined {
    const { count, max } = this.renewals.sum(now);
    if (count === 0 || this.last === undefined) return undefined;
    return { lastMs: round(this.last.latencyMs), maxMs: round(max), count };
  }

  lostRecently(now = performance.now()): number {
    return this.losses.sum(now).count;
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
