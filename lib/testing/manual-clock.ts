import type { Clock, ClockTimer } from '../core/time/clock.js';
import { parseDuration, type Duration } from '../core/time/duration.js';
import { setImmediate } from '../core/time/real-timers.js';
import { storeCallsBegun } from '../core/stores/memory/memory-data.js';

interface PendingTimer {
  at: number;
  order: number;
  fn: () => void;
}

/**
 * How many turns of the event loop in a row must begin no in-memory store call before `advance()`
 * takes the work a timer started for finished. A fixed number of turns cut off work that makes
 * more calls one after the other (a multi-key acquisition takes its keys one call each).
 */
const QUIET_TURNS = 20;
/** Turns one settling may take at most: code that calls the store on every turn, for ever, must not hang `advance()`. */
const MAX_SETTLE_TURNS = 10_000;
const MAX_ADVANCE_MS = 10 * 365 * 86_400_000;

/**
 * A clock that moves only when told to. Leases, renewals, waits and retries of an in-memory
 * lock store on this clock happen in order as `advance()` passes their time, without real
 * waiting, so that a test can expire a lock or starve a renewal deterministically.
 *
 * @example
 * ```ts
 * const locks = new InMemoryLocks({ clock: 'manual' });
 * // ... RedisLockTestingModule.forRoot({ locks, ttl: '30s', autoRenew: false })
 * const lock = await lockService.acquire('report');
 * await locks.manualClock.advance('31s');
 * expect(lock.signal.aborted).toBe(true); // the lease ran out
 * ```
 */
export class ManualClock implements Clock {
  private time = 0;
  private order = 0;
  private readonly timers = new Set<PendingTimer>();
  private advancing: Promise<void> = Promise.resolve();

  /** @internal No timer fires late here: the stall watch of `@OnOneInstance()` jobs is not set (see `Clock.stepped`). */
  readonly stepped = true;

  now(): number {
    return this.time;
  }

  /** @internal Called by the lock engine. */
  setTimer(fn: () => void, ms: number): ClockTimer {
    const timer: PendingTimer = { at: this.time + Math.max(0, ms), order: ++this.order, fn };
    this.timers.add(timer);
    return { cancel: () => this.timers.delete(timer) };
  }

  /** Timers waiting for the clock to reach them. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Moves the clock forward by `duration` (milliseconds or a string such as `'30s'`), firing
   * every timer that falls due on the way, earliest first, and letting the work each one starts
   * run before the next (until 20 turns of the event loop in a row call no in-memory store).
   * Calls made at once run one after the other. Should a timer's callback throw, this call
   * rejects with its error and stops there (the clock at that timer's time); later calls go on
   * from there.
   */
  advance(duration: Duration): Promise<void> {
    let ms: number;
    try {
      ms = parseDuration(duration, 'advance(duration)', 0, MAX_ADVANCE_MS);
    } catch (error) {
      return Promise.reject(error);
    }
    const move = this.advancing.then(() => this.moveBy(ms));
    // The next call waits for this one, not for its success: one failure must not fail them all.
    this.advancing = move.catch(() => undefined);
    return move;
  }

  private async moveBy(ms: number): Promise<void> {
    const target = this.time + ms;
    await settle();
    for (let next = this.due(target); next !== undefined; next = this.due(target)) {
      this.timers.delete(next);
      this.time = Math.max(this.time, next.at);
      next.fn();
      await settle();
    }
    this.time = target;
    await settle();
  }

  private due(target: number): PendingTimer | undefined {
    let first: PendingTimer | undefined;
    for (const timer of this.timers) {
      if (timer.at > target) continue;
      if (first === undefined || timer.at < first.at || (timer.at === first.at && timer.order < first.order)) first = timer;
    }
    return first;
  }
}

/**
 * Lets promise chains and the in-memory store's replies (one event-loop turn each) run, until
 * `QUIET_TURNS` turns in a row begin no store call.
 */
async function settle(): Promise<void> {
  let quiet = 0;
  for (let turn = 0; quiet < QUIET_TURNS && turn < MAX_SETTLE_TURNS; turn++) {
    const before = storeCallsBegun();
    await new Promise((resolve) => setImmediate(resolve));
    quiet = storeCallsBegun() === before ? quiet + 1 : 0;
  }
}
