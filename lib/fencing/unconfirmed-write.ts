import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import { RedisUnavailableError } from '../errors/redis-unavailable.error.js';
import { ReconnectGivenUpError } from '../core/stores/redis/drivers/redis-driver.js';
import { refusedReply } from '../core/engine/store-failure.js';

/**
 * An error reply of Redis (but for one that passes, see `refusedForNow`, or that lasts, see `refusedForGood`), as ioredis and node-redis give it (`WRONGTYPE ...`) or as Valkey GLIDE
 * words it (`WRONGTYPE: ...` for a code it has no name of its own for, `An error was signalled by
 * the server: ...` for the others): the script ran to that error, and it is passed on as it is.
 */
const REDIS_REPLY = /^(?:[A-Z][A-Z_]{1,31}(?: |: |$)|An error was signalled by the server: )/;

/**
 * A fenced write's or claim's failure that is no answer of Redis: the connection dropped or the
 * client timed out after sending it. The script may have run: ioredis sends it again after a
 * reset (see `RedisFencedStore.write`), node-redis and Valkey GLIDE reject it with their own
 * error, which said nothing of a write that may have landed, and was no `RedisLockError`.
 */
export function unconfirmedWrite(error: unknown, method: string, key: string, token: number): unknown {
  if (error instanceof RedisLockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  if (REDIS_REPLY.test(reason)) return error;
  const cause = reason.replace(/\.$/, '');
  const claim = method === 'get' || method === 'hget';
  return new RedisLockError(
    claim
      ? `FencedRedis.${method}(): the read for update of ${quoteKey(key)} may have been applied, claiming it with fencing token ${token}: Redis did not answer it (${cause}). Nothing was read for you to write back; read again.`
      : `FencedRedis.${method}(): the write to ${quoteKey(key)} may have been applied: Redis did not answer it (${cause}). Read its token with fence() before writing again: ${token} or higher means this write, or a newer holder's, landed.`,
    { cause: error },
  );
}

/**
 * What a client that fails fast while its connection is down (ioredis `enableOfflineQueue: false`,
 * node-redis `disableOfflineQueue: true`) rejects a command with, unsent: their own words.
 */
const OFFLINE_REFUSAL = /^(?:(?:Stream isn't writeable|Cluster isn't ready) and enableOfflineQueue options is false|The client is offline)$/;

/**
 * What Valkey GLIDE refuses a command with, unsent, at its `inflightRequestsLimit`, and what the
 * driver fails it with once it waited for a place in vain (see glide-driver.ts).
 */
const BUSY_REFUSAL = /maximum inflight requests|: the command was not sent\.?$/i;

/**
 * What ioredis and iovalkey refuse a command with, unsent, on a connection in subscriber mode (a
 * `subscribe()` after the client was handed to FencedRedis; ioredis 6 under RESP2 only). node-redis
 * sends it, and Redis runs it under RESP3 or answers it with an error reply under RESP2.
 */
const SUBSCRIBER_REFUSAL = /^Connection in subscriber mode, only subscriber commands may be used$/;

/**
 * What Valkey GLIDE refuses a command with, unsent, while its `clientCircuitBreaker` is open
 * ("Client circuit breaker is open - core unhealthy"): it rejects requests before they enter its core.
 */
const BREAKER_REFUSAL = 'CircuitBreakerError';

/** Why a client refused to send a command, from its error: none, when it may have been sent. */
export function unsentBecause(error: unknown): 'offline' | 'busy' | 'subscriber' | 'breaker' | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === BREAKER_REFUSAL || error.constructor.name === BREAKER_REFUSAL) return 'breaker';
  if (OFFLINE_REFUSAL.test(error.message)) return 'offline';
  if (SUBSCRIBER_REFUSAL.test(error.message)) return 'subscriber';
  return BUSY_REFUSAL.test(error.message) ? 'busy' : undefined;
}

/**
 * A fenced write's or claim's failure that the client gave without sending it: through a client
 * closed before the call (by its owner, or a node-redis client never connected), or through a
 * node-redis Cluster that gave the master's connection up (`ReconnectGivenUpError`), one refused by a
 * disabled offline queue while the connection is down, by GLIDE's limit of commands in flight, or
 * by an ioredis connection in subscriber mode, or by GLIDE's open circuit breaker; also a plain
 * read's or `fence()`'s (`plain`).
 * Nothing was written or claimed, which `unconfirmedWrite`'s "may have been applied" would deny.
 * One refused by a disabled offline queue, at GLIDE's limit or by its breaker passes (a `RedisUnavailableError`);
 * a write that may have been applied (`unconfirmedWrite`) stays a plain
 * `RedisLockError` (500 over HTTP, logged): a blind retry could apply it twice.
 */
export function unsentWrite(error: unknown, method: string, key: string, why: 'closed' | 'given-up' | 'offline' | 'busy' | 'subscriber' | 'breaker', plain = false): unknown {
  if (error instanceof RedisLockError) return error;
  const cause = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
  const claim = method === 'get' || method === 'hget';
  const what = plain ? `the read of ${method === 'fence' ? 'the fencing token of ' : ''}${quoteKey(key)}` : `${claim ? 'the read for update' : 'the write'} of ${quoteKey(key)}`;
  const nothing = plain ? '' : `, so nothing was ${claim ? 'claimed or read' : 'written'}`;
  const strategy = error instanceof ReconnectGivenUpError ? error.strategy : 'reconnect strategy';
  const reason = {
    closed: `its Redis client is closed (${cause})`,
    'given-up': `its Redis client gave up reconnecting to the master that serves the key (${cause}): its ${strategy} gave that connection up after it dropped, and the client sends nothing there any more, though it stays open`,
    offline: `its Redis client is not connected and sends nothing until it is, its offline queue being off (${cause})`,
    busy: `its Redis client had as many commands in flight as it allows (${cause})`,
    subscriber: `its Redis client is in subscriber mode, which sends only (UN)SUBSCRIBE and PING (${cause})`,
    breaker: `its Redis client's circuit breaker is open, after enough of its commands failed, and refuses commands unsent until a probe finds Redis back (GLIDE clientCircuitBreaker: ${cause})`,
  }[why];
  const then = {
    closed: 'Connect the client before using it (node-redis: await client.connect()), and close it only after its last call.',
    'given-up': `Give the client a ${strategy} that keeps trying while the application runs.`,
    offline: 'Try again once Redis answers.',
    busy: 'Try again once Redis answers.',
    subscriber: 'Subscribe on a duplicate() of the client, not on the one FencedRedis writes through.',
    breaker: 'Try again once Redis answers.',
  }[why];
  // Refused for want of a connection, or of a place among the commands in flight: that passes
  // (503 over HTTP). A closed client or one in subscriber mode is its owner's to fix (500).
  const Refusal = why === 'offline' || why === 'busy' || why === 'breaker' ? RedisUnavailableError : RedisLockError;
  return new Refusal(
    `FencedRedis.${method}(): ${what} was not sent: ${reason}${nothing}. ${then}`,
    { cause: error },
  );
}

/**
 * A `FencedRedis` call's refusal by Redis that passes (see `passingReply`): a failover's READONLY
 * (a write's or claim's script ran to its first write, which a replica refuses), LOADING,
 * MASTERDOWN, TRYAGAIN, CLUSTERDOWN, BUSY (none of them runs it). Nothing was written or claimed:
 * a `RedisUnavailableError`, as the lock calls' such refusals are (503 over HTTP), not the bare
 * reply; a plain read's or `fence()`'s (`plain`) too.
 */
export function refusedForNow(error: unknown, method: string, key: string, plain = false): RedisUnavailableError {
  const cause = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
  if (plain) {
    return new RedisUnavailableError(
      `FencedRedis.${method}(): Redis refused the read of ${method === 'fence' ? 'the fencing token of ' : ''}${quoteKey(key)} for now (${cause}). ` +
        'Try again once Redis serves it (a failover over, a restart done loading, a long script ended).',
      { cause: error },
    );
  }
  const claim = method === 'get' || method === 'hget';
  return new RedisUnavailableError(
    `FencedRedis.${method}(): Redis refused the ${claim ? 'read for update of' : 'write to'} ${quoteKey(key)} for now (${cause}), so nothing was ${claim ? 'claimed or read' : 'written'}. ` +
      'Try again once Redis serves it (a failover over, a restart done loading).',
    { cause: error },
  );
}

/**
 * How Redis goes on after the name of a command it does not know (the call's first arguments), or
 * what the drivers put there instead (see `scriptError`): left out of the message, which says more.
 */
const ECHOED_ARGUMENTS = /(?:, with args beginning with:| \(the arguments it echoed are left out)[\s\S]*$/;

/** What a `FencedRedis` call does: a write, a read for update (a claim), a plain read, or `fence()`'s read of a token. */
type Access = 'write' | 'claim' | 'read' | 'fence';

/**
 * A `FencedRedis` call's refusal by Redis that asking again does not cure (see `refusedReply`), as
 * the lock calls' are (see `storeFailure`): a server that does not know EVALSHA or EVAL
 * (`rename-command`, a proxy that leaves scripts out), a Redis user without a command or key it
 * needs (NOPERM), a server at its `maxmemory` that refuses writes (OOM). A write or read for update
 * counts only a refusal of the script before it wrote anything (one inside the script may follow
 * its first write, and is passed on as it is); a plain read or `fence()` writes nothing, and counts
 * one inside its script too. Nothing was written or claimed: a `RedisLockError` saying so and what
 * to fix (500 over HTTP, logged), the client's error as its `cause`, not the bare reply. `key` is
 * the data key, `fence` its token hash. Undefined for any other error.
 */
export function refusedForGood(error: unknown, method: string, key: string, fence: string, plain = false): RedisLockError | undefined {
  const access: Access = plain ? (method === 'fence' ? 'fence' : 'read') : method === 'get' || method === 'hget' ? 'claim' : 'write';
  const refusal = refusedReply(error, plain);
  if (refusal === undefined) return undefined;
  const touched = access === 'read' ? quoteKey(key) : access === 'fence' ? `the token hash ${quoteKey(fence)}` : `the key or its token hash ${quoteKey(fence)}`;
  const needs = access === 'write' || access === 'claim' ? 'its writes and reads for update are Lua scripts' : 'its reads are Lua scripts too';
  const why = {
    'unknown-command':
      `the server does not know a command FencedRedis needs (${needs} sent with EVALSHA, and with EVAL when Redis answers NOSCRIPT), and asking again changes nothing. ` +
      'Give EVALSHA and EVAL back their names on the server (rename-command), or connect past the proxy that leaves them out.',
    'no-permission':
      `the Redis user its client connects as may not run a command it needs or touch ${touched}, and asking again changes nothing. ` +
      'Grant that user +evalsha +eval +get +set +hget +hset on the data keys and their {...}:fence hashes (docs/fencing.md, "Redis: FencedRedis").',
    'out-of-memory':
      'Redis is at its maxmemory and refuses writes rather than evict (maxmemory-policy noeviction, or nothing left to evict), and asking again is refused alike until memory is freed. ' +
      'Free memory (delete or expire keys), or raise maxmemory.',
  }[refusal];
  const cause = (error as Error).message.replace(ECHOED_ARGUMENTS, '').replace(/\.$/, '');
  const what = { write: `the write to ${quoteKey(key)}`, claim: `the read for update of ${quoteKey(key)}`, read: `the read of ${quoteKey(key)}`, fence: `the read of the fencing token of ${quoteKey(key)}` }[access];
  const nothing = { write: ', so nothing was written', claim: ', so nothing was claimed or read', read: '', fence: '' }[access];
  return new RedisLockError(`FencedRedis.${method}(): Redis refused ${what} (${cause})${nothing}: ${why}`, { cause: error });
}

/**
 * A plain read's or `fence()`'s failure that passes (see `passes`) with no answer of Redis: a
 * connection refused, reset or down, a client's timeout. A read changes nothing, so asking again
 * is safe: a `RedisUnavailableError` (503 over HTTP), not the client's bare error.
 */
export function unansweredRead(error: unknown, method: string, key: string): RedisUnavailableError {
  const cause = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
  return new RedisUnavailableError(
    `FencedRedis.${method}(): Redis could not be asked for the read of ${method === 'fence' ? 'the fencing token of ' : ''}${quoteKey(key)} (${cause}). Try again once Redis answers.`,
    { cause: error },
  );
}
