import {
  BehaviorSubject,
  Subject,
  Subscription,
  distinctUntilChanged,
  exhaustMap,
  switchMap,
  takeUntil,
  timer,
} from 'rxjs';
import { now } from './clock.js';

/** What the watchdog keeps alive. */
export interface WatchdogTarget {
  /** Renews the lease; settles when done and never rejects. */
  renew(): Promise<void>;
  /** The local lease deadline passed without a successful renewal. */
  expire(): void;
}

/**
 * Keeps one lease alive: renews it every `renewInterval` and declares it lost when the local
 * lease deadline passes. Renewals never overlap (`exhaustMap`: a tick that comes while a
 * renewal is in flight is dropped) and each lock starts at a random phase, so that locks taken
 * together do not renew together.
 *
 * NOTE: the deadline has its own timer rather than being checked on renewal ticks, so a lock
 * is reported lost on time even while a renewal hangs on a dead connection.
 */
export class Watchdog {
  private readonly stop$ = new Subject<void>();
  private readonly interval$: BehaviorSubject<number>;
  private readonly deadline$: BehaviorSubject<number>;
  private readonly subscription = new Subscription();

  constructor(target: WatchdogTarget, renewInterval: number, deadline: number, autoRenew: boolean) {
    this.interval$ = new BehaviorSubject(renewInterval);
    this.deadline$ = new BehaviorSubject(deadline);
    if (autoRenew) {
      this.subscription.add(
        this.interval$
          .pipe(
            distinctUntilChanged(),
            switchMap((period) => timer(period - Math.random() * period * 0.1, period)),
            exhaustMap(() => target.renew()),
            takeUntil(this.stop$),
          )
          .subscribe(),
      );
    }
    this.subscription.add(
      this.deadline$
        .pipe(
          switchMap((at) => timer(Math.max(0, at - now()))),
          takeUntil(this.stop$),
        )
        .subscribe(() => target.expire()),
    );
  }

  /** A renewal succeeded: the lease now ends at `deadline`. */
  moveDeadline(deadline: number): void {
    this.deadline$.next(deadline);
  }

  /** The lease length changed (`extend(ttl)`): renew at the new pace. */
  changeInterval(renewInterval: number): void {
    this.interval$.next(renewInterval);
  }

  /** Cancels the timers at once; a renewal in flight is ignored when it returns. */
  stop(): void {
    this.stop$.next();
    this.stop$.complete();
    this.subscription.unsubscribe();
  }
}
