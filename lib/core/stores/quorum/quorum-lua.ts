/**
 * The acquire and release scripts of one master of a quorum. Nobody queues in quorum mode
 * (waiters poll), so a master never has a queue, a waiters set or a release channel, and these
 * leave out what the one-server scripts (`../redis/lock-lua.ts`) do for them: the queue check on
 * acquire and on release, and the names of those keys. The lock key and its fencing counter
 * (`<lock>:fence`) are the same keys the one-server scripts use. docs/redis-data.md documents
 * both.
 */
import { LOCK_KEY_SUFFIXES } from '../../keys/lock-key.js';
import { ON_REPLICA } from '../redis/replica-lua.js';

/**
 * KEYS: lock. ARGV: owner token, ttl, fencing: the fence retention in ms ('0' keeps the
 * counter forever), or '-' for a caller that takes no fencing token (the counter is left as it
 * is: fenced holders of the key still get increasing tokens); the seed of a new counter, in ms.
 * The fencing token, an integer (0 without fencing), or `{0, pttl}`. A lock this owner token already holds
 * (an earlier attempt whose give-back has not reached this master) is granted again with a
 * fresh lease, and with the next counter, as a first grant: the counter it would answer
 * otherwise may be a token a holder had since (written back here while the copy sat), and a
 * majority agreeing on it would hand that token out again.
 *
 * A counter `INCR` creates (the key's first lock, or a counter this master lost) starts at the
 * seed, not at 1: the acquiring instance's clock, one value per acquisition, sent to every master
 * (their own clocks differ, and a new key's masters would then never agree on a token, which
 * costs the round that writes it back). A master that lost its counter, shared by the next
 * majority with one that missed the last acquisitions, then still hands out a token above the
 * ones before (see `NEXT_FENCING`, `../redis/fence-lua.ts`, for the bound).
 */
export const QUORUM_ACQUIRE = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0, redis.call('PTTL', KEYS[1])} end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if ARGV[3] == '-' then return 0 end
local fence = KEYS[1] .. '${LOCK_KEY_SUFFIXES.fence}'
local fencing = redis.call('INCR', fence)
if fencing == 1 then
  redis.call('SET', fence, ARGV[4])
  fencing = tonumber(ARGV[4])
end
if ARGV[3] ~= '0' then redis.call('PEXPIRE', fence, ARGV[3]) end
return fencing
`;

/**
 * KEYS: lock. ARGV: owner token. `1` released, `0` not this owner's (checked on a master
 * only: a replica's answer would be stale, see ON_REPLICA).
 */
export const QUORUM_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
${ON_REPLICA}
return on_replica() or 0
`;
