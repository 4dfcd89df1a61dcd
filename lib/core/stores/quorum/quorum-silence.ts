import { RedisLockError } from '../../../errors/redis-lock.error.js';
import { now } from '../../time/clock.js';

/** How long a master may leave every command unanswered before it is asked nothing more. */
export const SILENT_AFTER_MS = 1_000;

/**
 * Which masters of a quorum have stopped answering: one with commands out and no answer to any
 * of them for `SILENT_AFTER_MS` (frozen with its connection open, a paused VM, a long script; or
 * down, its commands in the client's offline queue). Quorum mode keeps working without it, and
 * every attempt, give-back and renewal of the application sent it meanwhile would wait in the
 * client's memory, a backlog growing for the whole silence and run stale once it answers. A
 * silent master is not asked: its part counts as failed, as it would once the round's time is
 * up (a release skipped so is owed, as a timed-out one is). The commands already out settle
 * once it answers or its connection fails, and it is asked again from then on. One counter and
 * one time per master: a busy master that answers keeps answering, and is never silent.
 */
export class QuorumSilence {
  private readonly unanswered: number[];
  private readonly answeredAt: number[];

  constructor(size: number) {
    this.unanswered = new Array<number>(size).fill(0);
    this.answeredAt = new Array<number>(size).fill(0);
  }

  /** Why master `index` is not asked now, or `undefined` when it is. */
  refusal(index: number): RedisLockError | undefined {
    if (this.unanswered[index] === 0) return undefined;
    const waited = now() - this.answeredAt[index]!;
    if (waited < SILENT_AFTER_MS) return undefined;
    return new RedisLockError(`not asked: it has answered none of its ${this.unanswered[index]} commands out for ${Math.round(waited)} ms`);
  }

  /** A command went out to master `index`. */
  sent(index: number): void {
    // The silence counts from the first command left unanswered.
    if (this.unanswered[index]!++ === 0) this.answeredAt[index] = now();
  }

  /** Master `index` answered a command (or its connection failed it). */
  settled(index: number): void {
    this.unanswered[index]!--;
    this.answeredAt[index] = now();
  }

  /** `reply`, a command sent to master `index` outside a round, counted. */
  track<T>(index: number, reply: Promise<T>): Promise<T> {
    this.sent(index);
    const settled = () => this.settled(index);
    reply.then(settled, settled);
    return reply;
  }
}
