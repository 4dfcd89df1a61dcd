import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from '../errors/redis-lock.error.js';

/**
 * A token as the scripts and the memory store keep it (a token is a positive integer below 2^53,
 * sent as its decimal digits). Anything else in a token hash field was written by something other
 * than FencedRedis; the scripts test the same with `string.match(seen, '^%d+$')` (see
 * fenced-lua.ts), so that Redis and memory refuse the same fields.
 */
const KEPT_TOKEN = /^\d+$/;

/** Whether `seen`, a token hash field's value, is a token FencedRedis could have kept. */
export function isKeptToken(seen: string): boolean {
  return KEPT_TOKEN.test(seen);
}

/** The error reply the scripts end with on such a field (no write made): its code. */
export const NOT_A_TOKEN = 'NOTAFENCINGTOKEN';

/** Whether `error` is that reply, as any client words it (GLIDE adds its own words before it). */
export function isNotATokenReply(error: unknown): boolean {
  return error instanceof Error && error.message.includes(NOT_A_TOKEN);
}

/**
 * The refusal of a call on `key` whose token field in `hash` is no token. The value found is not
 * shown: it may be anything, an owner token too.
 */
export function notATokenError(method: string, key: string, hash: string, cause?: unknown): RedisLockError {
  const what = method === 'fence' ? 'Nothing was read' : method === 'get' || method === 'hget' ? 'Nothing was claimed or read' : 'Nothing was written';
  return new RedisLockError(
    `FencedRedis.${method}(): the fencing token kept for ${quoteKey(key)} (field ${quoteKey(key)} of the hash ${quoteKey(hash)}) is not a whole number, so no token can be compared with it: ` +
      `something other than FencedRedis wrote that field. ${what}. Set the field to the highest fencing token that has written the key (HSET), or delete it (HDEL) if none has.`,
    cause === undefined ? undefined : { cause },
  );
}
