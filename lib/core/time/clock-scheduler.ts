import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import type { Clock, ClockTimer } from './clock.js';

/** An RxJS scheduler on a `Clock`, so that the watchdog's intervals follow a manual clock too. */
export class ClockScheduler implements SchedulerLike {
  constructor(
    private readonly clock: Clock,
    /** Whether its timers keep the process alive (the watchdog's do, while locks are held). */
    private readonly unref = false,
  ) {}

  now(): number {
    return this.clock.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    return new ClockAction(this.clock, this.unref, work).schedule(state, delay);
  }
}

class ClockAction<T> extends Subscription implements SchedulerAction<T> {
  private timer?: ClockTimer;

  constructor(
    private readonly clock: Clock,
    private readonly unref: boolean,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super(() => this.timer?.cancel());
  }

  /** Runs the work after `delay`; the work may call this again to repeat (as `timer()` does). */
  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.timer?.cancel();
    this.timer = this.clock.setTimer(
      () => {
        this.timer = undefined;
        this.work.call(this, state);
      },
      delay,
      this.unref,
    );
    return this;
  }
}
