import { TIMED_OUT } from '../time/settle-within.js';
import type { DeadlineSweeper, Expiring } from './deadline-sweeper.js';
import type { Clock } from '../time/clock.js';
import { MAX_TIMER_MS } from '../options/lock-options.js';
import { setImmediate } from '../time/real-timers.js';

/**
 * Waits for the replies of acquire attempts, each for at most its bound, and no longer than the
 * caller's signal and the engine's shutdown allow (`settleWithin`, made for the path every lock
 * takes). A wait costs no timer and no abort listener of its own: deadlines go on the engine's
 * deadline sweeper (one timer for every lease and every wait), and shutdown ends the waits from
 * one list. Only a caller's own signal gets a listener.
 */
export class ReplyWaits {
  private readonly pending = new Set<ReplyWait>();
  private ended?: unknown;
  /**
   * Holds the event loop while any wait is pending (the sweeper's timer does not: it is
   * unref'd), so that an acquire in flight ends with its reply or its error even when nothing
   * else keeps the process alive (an unref'd client), instead of the process exiting in the
   * middle of it. One timer, ref'd and unref'd as waits come and go.
   */
  private keepAlive?: NodeJS.Timeout;

  constructor(
    private readonly sweeper: DeadlineSweeper,
    private readonly clock: Clock,
  ) {}

  /**
   * Resolves `map(value)` of `reply`'s value, `TIMED_OUT` past `bound` ms, or rejects with
   * `reply`'s error, `map`'s, the signal's reason or the shutdown's. `reply` is not cancelled.
   */
  wait<T, R>(reply: Promise<T>, bound: number, signal: AbortSignal | undefined, map: (value: T) => R): Promise<R | typeof TIMED_OUT> {
    if (this.ended !== undefined || signal?.aborted) {
      // Nobody will wait for `reply`, already sent: its failure (the connection the shutdown
      // closes) is nobody's to report, and left unhandled it could end the process.
      reply.catch(() => undefined);
      return Promise.reject(this.ended !== undefined ? this.ended : signal!.reason);
    }
    return new Promise((resolve, reject) => {
      const wait = new ReplyWait(this, this.clock.now() + bound, resolve, reject, signal);
      reply.then(
        (value) => {
          if (!wait.finish()) return;
          try {
            resolve(map(value));
          } catch (error) {
            reject(error);
          }
        },
        (error: unknown) => {
          if (wait.finish()) reject(error);
        },
      );
    });
  }

  /** Shutdown: every wait, present and future, rejects with `reason`. */
  end(reason: unknown): void {
    this.ended = reason;
    for (const wait of [...this.pending]) wait.fail(reason);
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  /** @internal */
  add(wait: ReplyWait): void {
    this.pending.add(wait);
    if (wait.deadline !== Infinity) this.sweeper.track(wait);
    if (this.pending.size === 1) (this.keepAlive ??= setInterval(() => undefined, MAX_TIMER_MS)).ref();
  }

  /** @internal */
  remove(wait: ReplyWait): void {
    this.pending.delete(wait);
    this.sweeper.untrack(wait);
    if (this.pending.size === 0) this.keepAlive?.unref();
  }
}

class ReplyWait implements Expiring {
  sweepIndex = -1;
  private done = false;
  private readonly onAbort?: () => void;

  constructor(
    private readonly waits: ReplyWaits,
    readonly deadline: number,
    private readonly resolve: (value: typeof TIMED_OUT) => void,
    private readonly reject: (error: unknown) => void,
    private readonly signal: AbortSignal | undefined,
  ) {
    waits.add(this);
    if (signal !== undefined) {
      this.onAbort = () => this.fail(signal.reason);
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  /** Ends the wait; false when it had already ended. */
  finish(): boolean {
    if (this.done) return false;
    this.done = true;
    this.waits.remove(this);
    if (this.onAbort !== undefined) this.signal!.removeEventListener('abort', this.onAbort);
    return true;
  }

  fail(reason: unknown): void {
    if (this.finish()) this.reject(reason);
  }

  /**
   * The bound is over: decided after the event loop's next poll for I/O, not at once. Timers run
   * before the loop reads its sockets, so after a stall (a long GC pause, a busy CPU) a reply
   * that came in during it would otherwise count as missing (see `QuorumRound.expire`).
   */
  expire(): void {
    setImmediate(() => {
      if (this.finish()) this.resolve(TIMED_OUT);
    });
  }
}
