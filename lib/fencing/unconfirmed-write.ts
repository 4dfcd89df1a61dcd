import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from '../errors/redis-lock.error.js';

/**
 * An error reply of Redis, as ioredis and node-redis give it (`WRONGTYPE ...`) or as Valkey GLIDE
 * names it: the script ran to that error, and it is passed on as it is.
 */
const REDIS_REPLY = /^(?:[A-Z][A-Z_]{1,31}(?: |$)|An error was signalled by the server: )/;

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

/** Whether `error` is a client's refusal to send while its connection is down (see `OFFLINE_REFUSAL`). */
export function refusedOffline(error: unknown): boolean {
  return error instanceof Error && OFFLINE_REFUSAL.test(error.message);
}

/**
 * A fenced write's or claim's failure that the client gave without sending it: through a client
 * closed before the call (`closed`: by its owner, or a node-redis client never connected), or one
 * refused by a disabled offline queue while the connection is down. Nothing was written or
 * claimed, which `unconfirmedWrite`'s "may have been applied" would deny.
 */
export function unsentWrite(error: unknown, method: string, key: string, closed: boolean): unknown {
  if (error instanceof RedisLockError) return error;
  const cause = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
  const claim = method === 'get' || method === 'hget';
  const why = closed
    ? `its Redis client is closed (${cause})`
    : `its Redis client is not connected and sends nothing until it is, its offline queue being off (${cause})`;
  const then = closed ? 'Connect the client before using it (node-redis: await client.connect()), and close it only after its last call.' : 'Try again once Redis answers.';
  return new RedisLockError(
    `FencedRedis.${method}(): ${claim ? 'the read for update' : 'the write'} of ${quoteKey(key)} was not sent: ${why}, so nothing was ${claim ? 'claimed or read' : 'written'}. ${then}`,
    { cause: error },
  );
}
