// Not the global timers, which a test's fake timers replace (see real-timers.ts).
import { clearTimeout, setTimeout } from 'node:timers';
import { MAX_TIMER_MS } from '../core/options/lock-options.js';
import { systemClock, type Clock, type ClockTimer } from '../core/time/clock.js';

/**
 * How long this instance's event loop may have been blocked before a moment. A timer beats every
 * `period`; a beat that comes more than a period late marks a stall. A tick that fell due while
 * the loop was blocked is called only as it runs again, so its call, made at once, says nothing
 * of how late the tick is: the owner may have run that tick and lost its lease meanwhile.
 */
export class LoopStallWatch {
  private period = Infinity;
  private beatAt = 0;
  private stall?: { from: number; to: number };
  private timer?: ClockTimer;
  private stopped = false;

  private readonly clock: Clock;

  /** @param clock the engine's: its leases run on while the loop is blocked. */
  constructor(clock: Clock) {
    this.clock = clock === systemClock ? NODE_CLOCK : clock;
  }

  /**
   * Beats every `period` ms from now on, or more often if asked before. Not on a stepped clock (the
   * manual one), where every beat comes on time: there its beats were timers of the test's own,
   * counted in `pendingTimers` and fired a dozen times per ttl at every `advance()`.
   */
  watch(period: number): void {
    if (this.stopped || this.clock.stepped === true || period >= this.period) return;
    this.period = period;
    this.timer?.cancel();
    this.beatAt = this.clock.now();
    this.schedule();
  }

  /**
   * The earliest moment the loop may have been blocked from, without a turn, until `at` (a call
   * made now): `at` itself when it ran in time. A call made as the loop came back from a stall
   * counts from the stall's start, whether its beat came first or has not come yet.
   */
  blockedSince(at: number): number {
    if (this.timer === undefined) return at;
    if (this.stall !== undefined && at - this.stall.to <= this.period / 2) return Math.min(at, this.stall.from);
    return Math.min(at, this.beatAt + this.period);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(): void {
    const due = this.beatAt + this.period;
    // Unref'd: the watch alone must not keep a process alive.
    this.timer = this.clock.setTimer(() => this.beat(due), this.period, true);
  }

  private beat(due: number): void {
    const now = this.clock.now();
    if (now - due > this.period) this.stall = { from: due, to: now };
    this.beatAt = now;
    this.schedule();
  }
}

/**
 * The system clock's time, with its beats on Node's own timers: the global ones, which the system
 * clock's timers use, are a test's fake timers once it installs them, and a beat that never runs
 * out there made `runAllTimers()` give up ("Aborting after running 10000 timers") in a test of an
 * application with an `@OnOneInstance()` job. A simulated clock (the explorer's, on which an
 * instance is paused) keeps its own: there a stall is its time passing without the beat.
 */
const NODE_CLOCK: Clock = {
  now: systemClock.now,
  setTimer(fn, ms) {
    // Past what one timer can wait, a beat comes sooner: it says no more than it should.
    const timer = setTimeout(fn, Math.min(ms, MAX_TIMER_MS)).unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
