import { RedisLockError } from '../../../errors/redis-lock.error.js';
import { now } from '../../time/clock.js';
import { setImmediate, setTimeout } from '../../time/real-timers.js';

/** How long a master may leave every command unanswered before it is asked nothing more. */
export const SILENT_AFTER_MS = 1_000;

/**
 * Which masters of a quorum have stopped answering: one with commands out, that left a round
 * unanswered, and that has answered nothing for `SILENT_AFTER_MS` (frozen with its connection
 * open, a paused VM, a long script; or down, its commands in the client's offline queue). Quorum
 * mode keeps working without it, and every attempt, give-back and renewal of the application
 * sent it meanwhile would wait in the client's memory, a backlog growing for the whole silence
 * and run stale once it answers. A silent master is not asked: its part counts as failed, as it
 * would once the round's time is up (a release skipped so is owed, and sent once it answers
 * again: see `onAnswerAgain`). The commands already out settle once it answers or its connection
 * fails, and it is asked again from then on. A busy master that answers keeps answering, and is
 * never silent; nor is one whose answers wait unread behind this process's own stalled event
 * loop: only a round's end, decided after the loop has read its sockets (QuorumRound.timeUp),
 * counts a master as having left a question unanswered, and only a look taken after the loop has
 * read them finds its second without an answer over (`watch`).
 */
/** What a silent master answers for the command it was not sent. */
export class SilentMaster extends RedisLockError {}

export class QuorumSilence {
  private readonly unanswered: number[];
  private readonly answeredAt: number[];
  private readonly lapsed: boolean[];
  /** By master: since when (`Date.now()`) every command for it was skipped; `undefined` once one is sent. */
  private readonly skippedSince: (number | undefined)[];
  /** By master: found silent by `watch`'s look, until it answers or its connection fails a command. */
  private readonly silent: boolean[];
  /** By master: `watch`'s timer, while one is set. */
  private readonly watches: (ReturnType<typeof setTimeout> | undefined)[];

  /** `onAnswerAgain(index)`: master `index` answered after it had left a round unanswered. */
  constructor(
    size: number,
    private readonly onAnswerAgain: (index: number) => void = () => undefined,
  ) {
    this.unanswered = new Array<number>(size).fill(0);
    this.answeredAt = new Array<number>(size).fill(0);
    this.lapsed = new Array<boolean>(size).fill(false);
    this.skippedSince = new Array<number | undefined>(size).fill(undefined);
    this.silent = new Array<boolean>(size).fill(false);
    this.watches = new Array<ReturnType<typeof setTimeout> | undefined>(size).fill(undefined);
  }

  /** Why master `index` is not asked now, or `undefined` when it is. */
  refusal(index: number): RedisLockError | undefined {
    if (!this.silent[index]) return undefined;
    const waited = now() - this.answeredAt[index]!;
    return new SilentMaster(`not asked: it has answered none of its ${this.unanswered[index]} commands out for ${Math.round(waited)} ms`);
  }

  /**
   * Finds master `index` silent once it has answered nothing for `SILENT_AFTER_MS` since it left a
   * round unanswered, in a look taken after the event loop's next poll for I/O, as a round's end
   * is decided (QuorumRound.expire): not from the clock as a round starts, which, read before the
   * loop has read its sockets (code that runs on from a stall, a timer due during it), counts the
   * stall as the master's, whose answer may have come in meanwhile, unread. Unref'd: a look keeps
   * no process alive.
   */
  private watch(index: number): void {
    if (this.silent[index] || this.watches[index] !== undefined) return;
    const look = (): void => {
      this.watches[index] = undefined;
      if (!this.lapsed[index] || this.unanswered[index] === 0) return;
      const wait = SILENT_AFTER_MS - (now() - this.answeredAt[index]!);
      if (wait > 0) arm(wait);
      else this.silent[index] = true;
    };
    const arm = (ms: number): void => {
      this.watches[index] = setTimeout(() => setImmediate(look), ms).unref();
    };
    arm(Math.max(0, SILENT_AFTER_MS - (now() - this.answeredAt[index]!)));
  }

  /** A round did not send master `index` its command (silent). */
  skipped(index: number): void {
    this.skippedSince[index] ??= Date.now();
  }

  /**
   * Whether master `index` has been sent nothing since `since` (`Date.now()` of a call's start):
   * then none of that call's attempts reached it, and it owes that call's release nothing.
   */
  skippedThroughout(index: number, since: number): boolean {
    const from = this.skippedSince[index];
    return from !== undefined && from <= since;
  }

  /** A command went out to master `index`. */
  sent(index: number): void {
    this.skippedSince[index] = undefined;
    // The silence counts from the first command left unanswered.
    if (this.unanswered[index]!++ === 0) this.moved(index);
  }

  /** Master `index`'s silence counts afresh from now (an answer, a failure, a first command out after none). */
  private moved(index: number): void {
    this.answeredAt[index] = now();
    this.silent[index] = false;
    if (this.lapsed[index] && this.unanswered[index]! > 0) this.watch(index);
  }

  /** Master `index` answered a command (`answered`), or its connection failed it. */
  settled(index: number, answered: boolean): void {
    this.unanswered[index]!--;
    // A failure (a reset connection) is no answer: what it was owed waits for one.
    const again = answered && this.lapsed[index]!;
    if (again) this.lapsed[index] = false;
    this.moved(index);
    if (again) this.onAnswerAgain(index);
  }

  /** A round ended without master `index`'s answer to the command it was sent. */
  leftUnanswered(index: number): void {
    if (this.unanswered[index]! === 0) return;
    this.lapsed[index] = true;
    this.watch(index);
  }

  /**
   * `settled`, or sooner once each master of `indexes` has either no command out or has answered
   * none of them for `SILENT_AFTER_MS` (silent, as a round's end would find it): what shutdown
   * waits for, which a master frozen just before it must not hold up until `shutdownTimeout`.
   * Every look, the first too, is taken after the event loop's next poll for I/O, as `watch`'s: a
   * close that runs on from a stall would otherwise count the stall as the masters' second without
   * an answer, and not wait for one whose answer came in meanwhile, unread.
   */
  settledOrSilent(indexes: number[], settled: Promise<unknown>): Promise<unknown> {
    if (indexes.length === 0) return settled;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ended = false;
    const silent = new Promise<void>((resolve) => {
      const check = (): void => {
        if (ended) return;
        let wait = 0;
        for (const index of indexes) if (this.unanswered[index]! > 0) wait = Math.max(wait, SILENT_AFTER_MS - (now() - this.answeredAt[index]!));
        if (wait > 0) look(wait);
        else resolve();
      };
      // A timer, then setImmediate: the loop polls its sockets in between.
      const look = (ms: number): void => {
        timer = setTimeout(() => setImmediate(check), ms);
      };
      look(0);
    });
    return Promise.race([settled, silent]).finally(() => {
      ended = true;
      clearTimeout(timer);
    });
  }

  /** `reply`, a command sent to master `index` outside a round, counted. */
  track<T>(index: number, reply: Promise<T>): Promise<T> {
    this.sent(index);
    reply.then(
      () => this.settled(index, true),
      () => this.settled(index, false),
    );
    return reply;
  }
}
