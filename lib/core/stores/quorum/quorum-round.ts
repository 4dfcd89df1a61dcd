import type { DeadlineSweeper, Expiring } from '../../engine/deadline-sweeper.js';
import { now } from '../../time/clock.js';
import { setImmediate } from '../../time/real-timers.js';
import type { QuorumSilence } from './quorum-silence.js';

/** One node's answer in a round: its value, or why it has none (an error, or no answer in time). */
export type Answer<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * What a node that did not answer within the round's time counts as (its command still runs):
 * the round's own, which says nothing of the node's client (one its owner closed fails at once).
 */
export class NoAnswerInTime extends Error {}

/**
 * One question asked of every node of a quorum at once, answered when every node has answered
 * or the round's time is up, whichever comes first; a node that has not answered by then counts
 * as failed (its command still runs). Every lock asks two or three of these, so a round costs
 * one entry on the store's deadline sweeper (one timer for every round in flight) rather than
 * a timer, an async function and a race per node.
 *
 * A round may also end early, once `enough` nodes gave an answer that `counts` (a majority that
 * released, say): the others' commands still run, their answers are not waited for, and they
 * are `undefined` in the answers (not yet known, which is not a failure).
 */
export class QuorumRound<T> implements Expiring {
  sweepIndex = -1;
  readonly deadline: number;
  private readonly answers: (Answer<T> | undefined)[];
  private pending: number;
  private counted = 0;
  private settle!: (answers: Answer<T>[]) => void;
  readonly done: Promise<Answer<T>[]>;

  constructor(
    size: number,
    private readonly timeout: number,
    private readonly sweeper: DeadlineSweeper,
    private readonly enough = Infinity,
    private readonly counts?: (answer: Answer<T>) => boolean,
    /** A node whose command failed after the round ended (a release a majority had confirmed), and how. */
    private readonly failedLate?: (index: number, error: unknown) => void,
    /** A node whose command succeeded after the round ended (it ended early, or timed out). */
    private readonly answeredLate?: (index: number) => void,
    /** Every command sent has settled (see `sent`: called once the round has a command out). */
    private readonly allSettled?: () => void,
  ) {
    this.deadline = now() + timeout;
    this.answers = new Array<Answer<T> | undefined>(size);
    this.pending = size;
    this.done = new Promise((resolve) => (this.settle = resolve));
    sweeper.track(this);
  }

  /** What counts the nodes' commands, and hears which left the round unanswered. */
  private silence?: QuorumSilence;
  /** By node: whether its command has settled (`undefined`: none was sent to it). */
  private readonly heard: (boolean | undefined)[] = [];
  /** Commands sent and not settled yet. */
  private unsettled = 0;
  /**
   * Settled on a majority before every node answered: the round stays on the sweeper until its
   * deadline (or the last answer), so that a node that never answers is still heard of as having
   * left it unanswered (QuorumSilence): rounds that end on a majority are most rounds.
   */
  private endedEarly = false;

  /** Sends `reply` (one node's command) into the round as node `index`'s answer; `silence` counts it. */
  add(index: number, reply: Promise<T>, silence?: QuorumSilence): void {
    this.silence = silence;
    silence?.sent(index);
    this.heard[index] = false;
    this.unsettled++;
    reply.then(
      (value) => {
        this.heardFrom(index, true);
        return this.pending === 0 ? this.answeredLate?.(index) : this.answer(index, { ok: true, value });
      },
      (error: unknown) => {
        this.heardFrom(index, false);
        return this.pending === 0 ? this.failedLate?.(index, error) : this.answer(index, { ok: false, error });
      },
    );
  }

  private heardFrom(index: number, answered: boolean): void {
    this.silence?.settled(index, answered);
    this.heard[index] = true;
    if (--this.unsettled > 0) return;
    if (this.endedEarly) this.sweeper.untrack(this);
    this.allSettled?.();
  }

  /**
   * Every node has been asked (or skipped): `allSettled` is heard of now when nothing was sent,
   * and later, when the last command sent settles, otherwise.
   */
  sent(): void {
    if (this.unsettled === 0) this.allSettled?.();
  }

  answer(index: number, answer: Answer<T>): void {
    if (this.pending === 0 || this.answers[index] !== undefined) return;
    this.answers[index] = answer;
    if (--this.pending > 0 && !(this.counts?.(answer) === true && ++this.counted >= this.enough)) return;
    this.pending = 0;
    if (this.silence !== undefined && this.unsettled > 0) this.endedEarly = true;
    else this.sweeper.untrack(this);
    this.settle(this.answers as Answer<T>[]);
  }

  /**
   * Time is up: the nodes that have not answered have failed. Decided after the event loop's
   * next poll for I/O, not at once: timers run before the loop reads its sockets, so after a
   * stall (a long GC pause, a busy CPU) the replies that came in during it would otherwise
   * count as missing.
   */
  expire(): void {
    if (this.endedEarly) setImmediate(() => this.unheard());
    else if (this.pending > 0) setImmediate(() => this.timeUp());
  }

  /** The deadline of a round that ended on a majority: the nodes still silent left it unanswered. */
  private unheard(): void {
    for (let i = 0; i < this.heard.length; i++) if (this.heard[i] === false) this.silence?.leftUnanswered(i);
  }

  private timeUp(): void {
    if (this.pending === 0) return;
    this.pending = 0;
    const late = new NoAnswerInTime(`no answer within ${this.timeout} ms`);
    for (let i = 0; i < this.answers.length; i++) {
      if (this.answers[i] !== undefined) continue;
      this.answers[i] = { ok: false, error: late };
      this.silence?.leftUnanswered(i);
    }
    this.settle(this.answers as Answer<T>[]);
  }
}
