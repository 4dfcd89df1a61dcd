import type { Clock, ClockTimer } from '../core/time/clock.js';

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

  constructor(private readonly clock: Clock) {}

  /** Beats every `period` ms from now on, or more often if asked before. */
  watch(period: number): void {
    if (this.stopped || period >= this.period) return;
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
