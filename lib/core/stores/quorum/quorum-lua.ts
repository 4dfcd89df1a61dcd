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
import { CHECK_INCR, FOREIGN_COUNTER } from '../redis/fence-lua.js';

/** The largest fencing token: 2^53 - 1, exact in a double (see `NEXT_FENCING`). */
const MAX_TOKEN = 9007199254740991;

/**
 * KEYS: lock. ARGV: owner token, ttl, fencing: the fence retention in ms ('0' keeps the
 * counter forever), or '-' for a caller that takes no fencing token (the counter is left as it
 * is: fenced holders of the key still get increasing tokens); the seed of a new counter, in ms.
 * The fencing token, an integer (0 without fencing), or `{0, pttl}`. A counter its `INCR` refuses
 * (a word, the largest integer Redis keeps, a key of another type, an ACL without it) ends it with
 * every key as it found it: a first grant deletes the lock its `SET NX` created before the refusal
 * is answered (`INCR` through `pcall`), as the one-server fast paths do (`nextFencingUndoing`),
 * rather than read the counter ahead of every attempt; a busy lock writes nothing; a grant again
 * looks at the counter first (`CHECK_INCR`), since its write, a `PEXPIRE`, cannot be taken back.
 * A lock this owner token already holds
 * (an earlier attempt whose give-back has not reached this master) is granted again with a
 * fresh lease, and with the next counter, as a first grant: the counter it would answer
 * otherwise may be a token a holder had since (written back here while the copy sat), and a
 * majority agreeing on it would hand that token out again.
 *
 * A counter that `INCR` takes past 2^53 - 1 (inexact in a double, a value this library never
 * wrote) ends it as `NEXT_FENCING` does, put back as it was and with a `FOREIGN_COUNTER` error (a
 * first grant's lock deleted first; a grant again looks before its `PEXPIRE`): its token would be
 * no safe integer (and a majority at 2^63 - 2 handed out the token 0, "no token"). A counter `INCR`
 * takes below 1 is raised to the seed instead, as a rolled-back one is.
 *
 * A counter below the seed after its `INCR` is set to the seed: the acquiring instance's clock,
 * one value per acquisition, sent to every master (their own clocks differ, and a new key's
 * masters would then never agree on a token, which costs the round that writes it back). That
 * starts a counter `INCR` creates (the key's first lock, or a counter this master lost) at the
 * clock rather than at 1, and it raises a counter rolled back (a failover of a Sentinel group or
 * a Cluster entry to a replica that missed the last acquisitions, an older snapshot restored) as
 * if it had been lost: a majority of lost or rolled-back counters then still hands out a token
 * above the ones before (see `NEXT_FENCING`, `../redis/fence-lua.ts`, for the bound). A key
 * taken more than once in a millisecond, or after an instance whose clock runs ahead, counts on
 * from its counter, the seed left out.
 */
export const QUORUM_ACQUIRE = `
local fence = KEYS[1] .. '${LOCK_KEY_SUFFIXES.fence}'
local fencing
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] == '-' then return 0 end
  -- The lock this SET created is the one write so far: taken back on a counter INCR refuses.
  fencing = redis.pcall('INCR', fence)
  if type(fencing) == 'table' then
    redis.call('DEL', KEYS[1])
    return fencing
  end
  if fencing > ${MAX_TOKEN} then
    -- Put back as it was, its expiry kept (INCR's value, of 16 digits or more, less one), and the
    -- lock taken back, before the refusal NEXT_FENCING gives such a counter.
    local now, left = redis.call('GET', fence), redis.call('PTTL', fence)
    local hi, lo = string.sub(now, 1, -9), tonumber(string.sub(now, -8)) - 1
    if lo < 0 then hi, lo = string.format('%d', tonumber(hi) - 1), 99999999 end
    local was = hi .. string.format('%08d', lo)
    if left > 0 then redis.call('SET', fence, was, 'PX', left) else redis.call('SET', fence, was) end
    redis.call('DEL', KEYS[1])
    error('${FOREIGN_COUNTER} ' .. was .. ' ' .. fence)
  end
else
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0, redis.call('PTTL', KEYS[1])} end
  -- Before the PEXPIRE: the lease it would push on was not read, and could not be put back.
  if ARGV[3] ~= '-' then
    ${CHECK_INCR}
    local held = redis.call('GET', fence)
    if held and string.match(held, '^%d+$') and (#held > 16 or (#held == 16 and held > '${MAX_TOKEN - 1}')) then
      error('${FOREIGN_COUNTER} ' .. held .. ' ' .. fence)
    end
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[3] == '-' then return 0 end
  fencing = redis.call('INCR', fence)
end
local seed = tonumber(ARGV[4])
if fencing < seed then
  redis.call('SET', fence, ARGV[4])
  fencing = seed
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
