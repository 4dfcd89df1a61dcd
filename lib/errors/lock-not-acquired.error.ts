import { quoteKey } from '../core/keys/quote-key.js';
import { LockLostError } from './lock-lost.error.js';
import { RedisLockError } from './redis-lock.error.js';
import { isShutdownReason } from './shutdown-reason.js';

/**
 * The lock could not be acquired within `waitTimeout`: another holder kept it, or Redis could
 * not be reached (then `cause` holds the last Redis error), or the application closed while
 * the call waited (then `cause` says so), or a lock the call was made within (a job's run lock,
 * a leader's term, an outer `using()`) was lost or stepped down from while it waited (then
 * `cause` is that lock's `LockLostError`, and the call's work never runs).
 *
 * @example
 * ```ts
 * try {
 *   await locks.using(`order:${id}`, () => ship(id), { waitTimeout: 0 });
 * } catch (err) {
 *   if (err instanceof LockNotAcquiredError) return 'busy, try again later';
 *   throw err;
 * }
 * ```
 */
export class LockNotAcquiredError extends RedisLockError {
  constructor(
    /** The lock key as the caller gave it (without the prefix). */
    readonly key: string,
    /** How long the caller waited, in milliseconds. */
    readonly waitedMs: number,
    options?: ErrorOptions,
    /** The call's `waitTimeout` in ms, when it ran out: the message says what the caller asked, not only how long its attempts took. */
    waitTimeout?: number,
  ) {
    const cause = options?.cause;
    super(
      isShutdownReason(cause)
        ? `Lock ${quoteKey(key)} was not acquired: LockService shut down (the application is closing) after ${Math.round(waitedMs)} ms of waiting.`
        : cause instanceof LockLostError
          ? lostMessage(key, waitedMs, cause)
          : busyMessage(key, waitedMs, cause, waitTimeout),
      options,
    );
  }
}

/**
 * A lock of the call's chain has another key than the call's (the same key in the chain is
 * re-entered, never waited for): a loss of the call's own key is a part of a multi-key call,
 * taken and then lost (its lease ran out) while the call took its other keys.
 */
function lostMessage(key: string, waitedMs: number, cause: LockLostError): string {
  const ended = cause.key === key ? 'the call took it, then lost it while it took its other keys,' : 'the lock its call waited within ended';
  return `Lock ${quoteKey(key)} was not acquired: ${ended} after ${Math.round(waitedMs)} ms of waiting (${cause.message})`;
}

/**
 * A call's attempt takes a round trip however short its waitTimeout: `within 3 ms` alone read as
 * a wait of 3 ms asked for by a call that had asked for none.
 */
function busyMessage(key: string, waitedMs: number, cause: unknown, waitTimeout: number | undefined): string {
  const why =
    cause instanceof RedisLockError
      ? // The library's own words say what became of the attempt: a RedisUnansweredError ("Redis did
        // not answer the acquire of lock ... within 1000 ms"), not twice; a quorum not reached, each
        // master's answer quoted (READONLY, LOADING: answered; no answer within N ms: not); a grant
        // whose reply came too late. "Redis did not answer (...)" around them was wrong for most.
        cause.message.replace(/\.$/, '')
      : cause instanceof Error
        ? `Redis ${refusedByRedis(cause) ? 'refused it' : 'did not answer'} (${cause.message})`
        : 'another holder kept it';
  if (waitTimeout === 0) return `Lock ${quoteKey(key)} was not acquired: ${why}, and the call did not wait (waitTimeout 0). Raise waitTimeout to wait for it, or handle LockNotAcquiredError as "busy".`;
  const within = waitTimeout === undefined ? `${Math.round(waitedMs)} ms` : `its waitTimeout of ${waitTimeout} ms (${Math.round(waitedMs)} ms after the call)`;
  return `Lock ${quoteKey(key)} was not acquired within ${within}: ${why}. Raise waitTimeout to wait longer, or handle LockNotAcquiredError as "busy".`;
}

/**
 * Whether `cause` is Redis' answer refusing the attempt (READONLY, LOADING, OOM, BUSY...), asked
 * again until the wait ran out, rather than no answer: a reply error starts with its code, as
 * ioredis and node-redis give it ("READONLY You can't write ..."), or as Valkey GLIDE words it
 * ("An error was signalled by the server: - ReadOnly: ...", "OOM: command not allowed ...");
 * an ioredis Cluster that stopped following a slot migration's answers (TRYAGAIN, ASK, MOVED)
 * at its `maxRedirections` names the last one after "Too many Cluster redirections. Last error:
 * ReplyError: ". The library's own errors (a quorum not reached) are not.
 */
function refusedByRedis(cause: Error): boolean {
  if (cause instanceof RedisLockError) return false;
  return /^(?:Too many Cluster redirections\. Last error: ReplyError: )?(?:[A-Z][A-Z_]{1,31}(?: |: )|An error was signalled by the server: - )/.test(cause.message);
}
