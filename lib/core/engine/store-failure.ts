import { RedisLockError } from '../../errors/redis-lock.error.js';
import { RedisUnavailableError } from '../../errors/redis-unavailable.error.js';
import { ReconnectGivenUpError, withoutArguments } from '../stores/redis/drivers/redis-driver.js';
import { escapeUnsafe, quoteKey } from '../keys/quote-key.js';
import { FOREIGN_COUNTER } from '../stores/redis/fence-lua.js';

/**
 * Whether Redis refused a script because a key it touched holds data of another kind than the
 * script keeps there (a hash where a lock's string is, a word where a fencing counter is):
 * something other than this library writes under its key prefix, and asking again changes nothing.
 * Redis 7 starts the reply with the command's error; Redis 6 wraps it in "Error running script".
 */
export function holdsForeignData(error: unknown): boolean {
  if (error instanceof ForeignDataRead) return true;
  const message = error instanceof Error ? error.message : '';
  return /\bWRONGTYPE\b|value is not an integer or out of range|increment or decrement would overflow/.test(message) || message.includes(FOREIGN_COUNTER);
}

/**
 * That error's value and key, as Redis words a script's error (7: `ERR user_script:<line>:` before
 * it, ` script: <sha>, on @user_script:<line>.` after it; 5 and 6: `ERR Error running script (call
 * to f_<sha>): @user_script:<line>:` before it).
 */
const FOREIGN_COUNTER_REPLY = new RegExp(`${FOREIGN_COUNTER} (-?\\d+) ([\\s\\S]*?)(?: script: [0-9a-f]{40}, on @user_script:\\d+\\.?)?\\s*$`);

/**
 * A store's error as a message shows it beside others (each quorum master's reply, see
 * QuorumStore): Redis' `FOREIGN_COUNTER` reply names its counter key raw, the lock's key, which is
 * the caller's text; that key is shown quoted, escaped and cut as `quoteKey` shows every key (Redis'
 * trailer naming the script left out), and any control character left elsewhere escaped, so that
 * no reply forges a log line.
 */
export function shownReply(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const counter = FOREIGN_COUNTER_REPLY.exec(message);
  const text = counter === null ? message : `${message.slice(0, counter.index)}${FOREIGN_COUNTER} ${counter[1]} ${quoteKey(counter[2]!)}`;
  // eslint-disable-next-line no-control-regex
  return escapeUnsafe(text).replace(/[\u0000-\u001f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * What a plain read (no script, so no refusal of Redis) found where the library keeps data of its
 * own: a fencing counter that is no integer, which every acquire script would be refused on.
 */
export class ForeignDataRead extends Error {}

/**
 * A quorum's majority unavailable for now (see QuorumStore's `noQuorum`): a store names no call,
 * so `storeFailure` names it as it names a client's error on one Redis (`tryAcquire("k"): ...`),
 * its cause kept (the first failing master's error). Unnamed (an acquire()'s last refusal, the
 * cause of its LockNotAcquiredError, which names the key), it shows as the RedisUnavailableError it is.
 */
export class QuorumUnavailableError extends RedisUnavailableError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RedisUnavailableError';
  }

  /** This error named by `call`, `then` said after it, as `storeFailure` words a client's. */
  named(call: string, then = ''): RedisUnavailableError {
    return new RedisUnavailableError(`${call}: ${this.message.replace(/\.$/, '')}${then}.`, { cause: this.cause });
  }
}

/** Which refusal asking again cannot change (see `lastingRefusal`). */
export type LastingRefusal = 'unknown-command' | 'no-permission' | 'client-closed';

/**
 * The library's error for refusals asking again cannot change that together end a call: a
 * quorum's whose majority of masters refused so (the rest can never make a majority). Any other
 * error of the library says nothing lasting: a minority's refusal leaves a majority that may grant.
 */
export class LastingRefusalError extends RedisLockError {
  constructor(
    message: string,
    readonly lasting: LastingRefusal,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A refusal that asking again cannot change, beside data of another kind (`holdsForeignData`):
 * a command the server does not know (EVALSHA or EVAL renamed or disabled with `rename-command`,
 * a proxy that does not pass scripts on; a script calling one: "Unknown Redis command called from
 * script"), a command or key the ACL user may not touch (NOPERM; Redis 6 says it in words inside a
 * script; Valkey GLIDE names it "An error was signalled by the server: - PermissionDenied: ..."), or a client that sends nothing any more (`clientClosed`: closed by its owner, or an
 * ioredis or node-redis client whose reconnect strategy gave up), or nothing to the master that
 * serves the call (`ReconnectGivenUpError`: a node-redis Cluster's connection given up so). What passes by, or is cured by waiting, is not one:
 * a connection reset, LOADING, READONLY or MASTERDOWN during a failover, TRYAGAIN, CLUSTERDOWN. The
 * library's own errors are not either: a quorum's refusal of a minority of masters says nothing of
 * the majority (one of a majority is a `LastingRefusalError`).
 */
export function lastingRefusal(error: unknown, clientClosed: boolean): LastingRefusal | undefined {
  if (error instanceof RedisLockError) return error instanceof LastingRefusalError ? error.lasting : undefined;
  // A node-redis Cluster's master connection given up by its reconnect strategy: closed for good, the Cluster open.
  if (clientClosed || error instanceof ReconnectGivenUpError) return 'client-closed';
  const refusal = refusedReply(error, true);
  return refusal === 'out-of-memory' ? undefined : refusal;
}

/** Which of Redis' refusals asking again does not cure a reply is (see `refusedReply`). */
export type RefusedReply = 'unknown-command' | 'no-permission' | 'out-of-memory';

/**
 * Redis' refusals that asking again does not cure, as the clients word them, in one place for the
 * lock calls (`lastingRefusal`) and `FencedRedis` (fencing/unconfirmed-write.ts). Of the call
 * itself, before a script runs: a command the server does not know (`ERR unknown command
 * 'evalsha'`); a command, or a declared key, the Redis user may not touch (`NOPERM ...`, Valkey
 * GLIDE `... - PermissionDenied: ...`); a write refused for want of memory (`OOM command not
 * allowed ...`, GLIDE `OOM: ...`), which Redis gives to a script's first write only. With
 * `withinScript`, also a refusal inside the script (`Unknown Redis command called from script`,
 * `The user executing the script can't ...`, Redis 6's `NOPERM` in words): it may follow the
 * script's first write, so a fenced write or read for update does not count it as one.
 */
export function refusedReply(error: unknown, withinScript: boolean): RefusedReply | undefined {
  if (!(error instanceof Error) || error instanceof RedisLockError) return undefined;
  const message = error.message;
  if (/\bunknown command\b/i.test(message) || (withinScript && /unknown redis command called from script/i.test(message))) return 'unknown-command';
  if (/^NOPERM\b|^An error was signalled by the server: - PermissionDenied:/i.test(message) || (withinScript && /\bNOPERM\b|user executing the script can't/i.test(message))) return 'no-permission';
  if (/^OOM\b|command not allowed when used memory/.test(message)) return 'out-of-memory';
  return undefined;
}

/**
 * A store's rejection as the library's error, so that one `instanceof RedisLockError` tells lock
 * trouble from the caller's own: the library's errors pass as they are; a client's (a connection
 * closed, a command refused) is named by `call`, `then` said after it, and kept as the `cause`.
 * A refusal asking again cannot change says what to fix (`clientClosed`: see `lastingRefusal`).
 */
export function storeFailure(error: unknown, call: string, then = '', clientClosed = false): RedisLockError {
  if (error instanceof QuorumUnavailableError) return error.named(call, then);
  if (error instanceof RedisLockError) return error;
  // Kept as the cause: printed with its own properties (see `withoutArguments`).
  withoutArguments(error);
  const reason = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
  if (holdsForeignData(error)) {
    const counter = FOREIGN_COUNTER_REPLY.exec(reason);
    const found =
      error instanceof ForeignDataRead
        ? reason
        : counter !== null
          ? `its fencing counter ${quoteKey(counter[2]!)} holds ${counter[1]}, which no fencing token can be (a whole number from 1 to 2^53 - 1, exact in a double), and was left so`
          : `Redis refused it (${reason})`;
    return new RedisLockError(
      `${call}: ${found}: a key of the lock holds data this library did not write, so something else writes under its key prefix; delete that key, or give the module a keyPrefix of its own${then}.`,
      { cause: error },
    );
  }
  switch (lastingRefusal(error, clientClosed)) {
    case 'unknown-command':
      return new RedisLockError(
        `${call}: Redis refused it (${reason}): the server does not know a command the locks need, and asking again changes nothing; give EVALSHA and EVAL back their names on the server (rename-command), or connect past the proxy that leaves them out${then}.`,
        { cause: error },
      );
    case 'no-permission':
      return new RedisLockError(
        `${call}: Redis refused it (${reason}): the Redis user the module connects as may not run a command the locks need or touch the lock's keys, and asking again changes nothing; grant that user's ACL what docs/deployment.md lists ("Least-privilege Redis user")${then}.`,
        { cause: error },
      );
    case 'client-closed':
      if (error instanceof ReconnectGivenUpError) {
        return new RedisLockError(
          `${call}: the Redis client gave up reconnecting to the master that serves it (${reason}): its ${error.strategy} gave that connection up after it dropped, and the client sends nothing to that master any more, though it stays open; give it a ${error.strategy} that keeps trying while the application runs${then}.`,
          { cause: error },
        );
      }
      return new RedisLockError(
        `${call}: the Redis client was closed (${reason}) and sends no command any more (its owner called quit(), disconnect() or close(), or its reconnect strategy gave up reconnecting: ioredis' retryStrategy, node-redis' socket.reconnectStrategy); close a client you hand in only after the lock module shut down (in onApplicationShutdown), and give it a reconnect strategy that keeps trying while the application runs${then}.`,
        { cause: error },
      );
    default: {
      // Only what is known to pass is "unavailable" (503 over HTTP, no error log): anything else,
      // a script's error or a driver's TypeError included, may be a bug to see (500, logged).
      const Failure = passes(error) ? RedisUnavailableError : RedisLockError;
      return new Failure(`${call}: Redis could not be asked (${reason})${then}.`, { cause: error });
    }
  }
}

/**
 * Refusals of Redis that a failover, a restart's loading or a long script give for a while; also
 * as Redis 6 words them inside a script's error (`... -READONLY You can't write ...`), and as
 * Valkey GLIDE names their codes (`An error was signalled by the server: - ReadOnly: You can't
 * write ...`; LOADING is its BusyLoadingError).
 */
const PASSING_REPLY =
  /(?:^|\s-)(?:LOADING|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|BUSY)\b|^ERR max number of clients reached|An error was signalled by the server: - (?:ReadOnly|BusyLoadingError|MasterDown|TryAgain|ClusterDown):/;

/**
 * Whether `error` is Redis' own refusal that passes (`PASSING_REPLY`): a command Redis answered so
 * ran no write (a replica refuses the first, a loading or busy server runs none).
 */
export function passingReply(error: unknown): boolean {
  return error instanceof Error && !(error instanceof RedisLockError) && PASSING_REPLY.test(error.message);
}

/**
 * Whether `error` is an ioredis (or iovalkey) Cluster's giving up at its `maxRedirections` on Redis'
 * own replies ("Too many Cluster redirections. Last error: ReplyError: TRYAGAIN ...", or `MOVED`,
 * `ASK`, `CLUSTERDOWN`: a slot migrating or moved), not on a connection's failure ("Last error:
 * Error: Connection is closed."): Redis answered the last time it was asked, refusing for now.
 * Not `passingReply`'s: an earlier try of the command, on a connection that closed, may have run.
 */
export function redirectedUntilGivenUp(error: unknown): boolean {
  return error instanceof Error && !(error instanceof RedisLockError) && /^Too many Cluster redirections\. Last error: ReplyError: [A-Z]/.test(error.message);
}

/** Socket errors of a connection refused, reset or cut, and of an address not found for now. */
const PASSING_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * The clients' own errors for a connection down or a command unanswered in time: ioredis'
 * `maxRetriesPerRequest` spent; node-redis' socket closed, timed out or offline, and its command
 * timeout; Valkey GLIDE's connection and timeout errors; an ioredis or iovalkey Cluster's slot map
 * that no node gave (`ClusterAllFailedError`, "Failed to refresh slots cache.": every master down,
 * as one master down is "Too many Cluster redirections"; today's clients give it to their `error`
 * event and to a slot refresh only, not to a command); Valkey GLIDE's open `clientCircuitBreaker`
 * (`CircuitBreakerError`: enough commands failed that it refuses the rest unsent until a probe
 * finds the server back). Not a closed client's (ioredis
 * "Connection is closed.", node-redis `ClientClosedError`, GLIDE `ClosingError`): it sends nothing
 * any more, which its owner is to fix.
 */
const PASSING_ERRORS = new Set(['MaxRetriesPerRequestError', 'SocketClosedUnexpectedlyError', 'ConnectionTimeoutError', 'SocketTimeoutError', 'ClientOfflineError', 'TimeoutError', 'ConnectionError', 'ClusterAllFailedError', 'CircuitBreakerError']);

/**
 * What the clients say, unnamed, of a command refused unsent while the connection is down
 * (ioredis `enableOfflineQueue: false`; node-redis `disableOfflineQueue: true`), of ioredis'
 * `commandTimeout`, of GLIDE's commands in flight at its `inflightRequestsLimit` (failed by the
 * driver after waiting for a place), and of an ioredis or iovalkey Cluster's command it stopped
 * asking again at its `maxRedirections` ("Too many Cluster redirections. Last error: ..."): it
 * asks again only what passes (a master's connection closed, MOVED, ASK, TRYAGAIN, CLUSTERDOWN).
 */
const PASSING_MESSAGE =
  /^(?:(?:Stream isn't writeable|Cluster isn't ready) and enableOfflineQueue options is false|The client is offline|Command timed out)$|maximum inflight requests|: the command was not sent\.?$|^Too many Cluster redirections\. Last error: /i;

/**
 * Whether a client's error is one that passes by, or that waiting cures, with no one to fix
 * anything: Redis out of reach or busy for now. `LockConflictInterceptor` answers the
 * `RedisUnavailableError` it makes 503 with `Retry-After`.
 */
export function passes(error: unknown): boolean {
  if (!(error instanceof Error) || error instanceof RedisLockError) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && PASSING_CODES.has(code)) return true;
  if (PASSING_ERRORS.has(error.name) || PASSING_ERRORS.has(error.constructor.name)) return true;
  return PASSING_REPLY.test(error.message) || PASSING_MESSAGE.test(error.message);
}
