import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import type { Clock, ClockTimer } from './clock.js';

/** An RxJS scheduler on a `Clock`, so that the watchdog's intervals follow a manual clock too. */
export class ClockScheduler implements SchedulerLike {
  private readonly pending = new Set<ClockAction<never>>();

  constructor(
    private readonly clock: Clock,
    /** Whether its timers let the process exit (the watchdog's do once it holds no lock). */
    private unref = false,
  ) {}

  now(): number {
    return this.clock.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    return new ClockAction(this.clock, this, work).schedule(state, delay);
  }

  get unrefTimers(): boolean {
    return this.unref;
  }

  /**
   * Changes whether its timers keep the process alive, the pending ones included: an interval
   * of twenty minutes already armed must not hold a process that has nothing left to renew.
   */
  setUnref(unref: boolean): void {
    if (this.unref === unref) return;
    this.unref = unref;
    for (const action of this.pending) action.rearm();
  }

  /** @internal */
  armed(action: ClockAction<never>, pending: boolean): void {
    if (pending) this.pending.add(action);
    else this.pending.delete(action);
  }
}

class ClockAction<T> extends Subscription implements SchedulerAction<T> {
  private timer?: ClockTimer;
  private dueAt = 0;
  private state?: T;

  constructor(
    private readonly clock: Clock,
    private readonly scheduler: ClockScheduler,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super(() => {
      this.timer?.cancel();
      this.scheduler.armed(this as never, false);
    });
  }

  /** Runs the work after `delay`; the work may call this again to repeat (as `timer()` does). */
  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.state = state;
    this.dueAt = this.clock.now() + delay;
    this.arm(delay);
    return this;
  }

  /**
   * Gives the pending timer the scheduler's current unref: in place where the clock's timers
   * allow it, else by arming it again for the time it has left. In place matters: the watchdog
   * switches each time its group gains its first lock or loses its last one, which with one
   * lock at a time is every lock, and every new Node timer of a fractional delay starts a
   * timer list of its own that lives until the delay has passed.
   */
  rearm(): void {
    if (this.timer === undefined) return;
    if (this.timer.setUnref !== undefined) this.timer.setUnref(this.scheduler.unrefTimers);
    else this.arm(Math.max(0, this.dueAt - this.clock.now()));
  }

  private arm(delay: number): void {
    this.timer?.cancel();
    this.scheduler.armed(this as never, true);
    this.timer = this.clock.setTimer(
      () => {
        this.timer = undefined;
        this.scheduler.armed(this as never, false);
        this.work.call(this, this.state);
      },
      delay,
      this.scheduler.unrefTimers,
    );
  }
}
