import { argumentKind } from './argument-kind.js';
import { LONE_SURROGATE } from '../core/keys/lock-key.js';
import { quoteKey } from '../core/keys/quote-key.js';

/**
 * Where the fencing token of resource `key` is kept: a field named `key` in the hash
 * `{<tag>}:fence`, where `<tag>` is the key's Redis Cluster hash tag (the text between its
 * first `{` and the next `}`), or the whole key when it has none. Either way the hash is in
 * the key's slot, so one script writes both on a Cluster (no CROSSSLOT), and the keys of one
 * tag share one hash. The token outlives the data: a `DEL` of the data leaves it, so a late
 * write after a delete is still refused.
 *
 * @throws TypeError for a key that cannot have its fence in its own slot: an empty key, or a
 * key with a `}` but no hash tag (`{` ... `}` with text between); for a key that is not
 * well-formed Unicode (Redis would store its lone surrogates as U+FFFD: two keys, one resource);
 * and for a key that is a fence hash's own name (`{<tag>}:fence`), whose write would overwrite
 * the tokens of its whole tag.
 */
export function fenceHashOf(key: string, method: string): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new TypeError(`FencedRedis.${method}(): Argument "key" must be a non-empty string, got ${key === '' ? 'an empty string' : argumentKind(key)}.`);
  }
  if (LONE_SURROGATE.test(key)) {
    throw new TypeError(
      `FencedRedis.${method}(): Argument "key" ${quoteKey(key)} is not well-formed Unicode: Redis would store its lone surrogate as U+FFFD, the same key as others. Use String.prototype.toWellFormed().`,
    );
  }
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) {
      const fence = `{${key.slice(open + 1, close)}}:fence`;
      if (fence === key) {
        throw new TypeError(
          `FencedRedis.${method}(): Argument "key" ${quoteKey(key)} is the name of the hash that keeps the fencing tokens of its hash tag; a resource cannot be stored there. Rename the key.`,
        );
      }
      return fence;
    }
  }
  if (key.includes('}')) {
    throw new TypeError(
      `FencedRedis.${method}(): Argument "key" ${quoteKey(key)} has a "}" but no hash tag, so its fencing token cannot be kept in its Redis Cluster slot; ` +
        'give it a hash tag, e.g. "balance:{account-7}".',
    );
  }
  return `{${key}}:fence`;
}

/**
 * The refusal of a data key that is a lock's own name (or a sibling's: its fencing counter, its
 * queue) under `lockPrefix`, the client's `keyPrefix` included: a write there would replace the
 * lock, and a plain read (`read`) would answer what the lock keeps there, its holder's owner
 * token. On Redis and in memory alike, so that code tested in memory fails there as deployed.
 */
export function lockKeyRefusal(method: string, key: string, clientPrefix: string, lockPrefix: string, read = false): TypeError {
  return new TypeError(
    `FencedRedis.${method}(): Argument "key" ${quoteKey(key)}${clientPrefix === '' ? '' : ` with the client's keyPrefix ${quoteKey(clientPrefix)}`} is under ${quoteKey(lockPrefix + '{')}, ` +
      `where a lock module of this process keeps its locks: ${read ? "that is a lock's own key, whose value is the lock's, not data" : 'a write there would replace a lock'}. Name the data outside the lock prefix.`,
  );
}
