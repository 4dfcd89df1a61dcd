import { createHash } from 'node:crypto';
import type { LuaScript } from '../core/stores/redis/drivers/redis-driver.js';
import { NOT_A_TOKEN } from './kept-token.js';

const script = (lua: string): LuaScript => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

/*
 * Fenced writes. KEYS[1] is the resource, KEYS[2] the hash of fencing tokens of its hash tag
 * (see fence-key.ts); ARGV[1] the resource's field in that hash (its key), ARGV[2] the writer's
 * fencing token. A write whose token is lower than the one kept is refused and returns the kept
 * one; otherwise the data and the token are written together and the reply is nil. Equal tokens
 * pass: a reentrant holder writes with the token of its outermost acquisition, as many times as
 * it likes. Tokens are integers below 2^53, exact in Lua's doubles. A field that is no token
 * (written by something else) ends the script with a NOT_A_TOKEN error reply, nothing
 * written (see kept-token.ts): Lua would fail comparing it, naming neither key nor field.
 */
const KEPT = `
local seen = redis.call('HGET', KEYS[2], ARGV[1])
if seen and not string.match(seen, '^%d+$') then return redis.error_reply('${NOT_A_TOKEN} the kept fencing token is not a whole number') end
`;

const CHECK = `${KEPT}
if seen and tonumber(seen) > tonumber(ARGV[2]) then return seen end
`;

/** SET KEYS[1] ARGV[3], fenced. */
export const FENCED_SET = script(`${CHECK}
redis.call('SET', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return false
`);

/**
 * HSET KEYS[1] ARGV[3] ARGV[4] ..., fenced: the hash is one resource with one token. In HSETs of
 * at most 1,000 fields: Lua's unpack() fails past a few thousand values (its C stack).
 */
export const FENCED_HSET = script(`${CHECK}
for first = 3, #ARGV, 2000 do
  redis.call('HSET', KEYS[1], unpack(ARGV, first, math.min(first + 1999, #ARGV)))
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return false
`);

/** GET KEYS[1] (a script, so that every driver routes and prefixes it as it does the writes). */
export const FENCED_GET = script(`return redis.call('GET', KEYS[1])`);

/** HGET KEYS[1] ARGV[1]. */
export const FENCED_HGET = script(`return redis.call('HGET', KEYS[1], ARGV[1])`);

/*
 * Reads for update: a holder claims the resource with its token as it reads it, so that the
 * write of an older holder that lands between this read and this holder's own write is refused
 * (else it would be overwritten by a value computed without it: a lost update). Keys and the
 * first two ARGV as for the writes; refused: \`{1, kept token}\`, nothing changed; else the token
 * is kept and the reply is \`{0, value}\`. The read comes first: a key of another type fails the
 * call before anything is written.
 */
const CLAIM = `${KEPT}
if seen and tonumber(seen) > tonumber(ARGV[2]) then return {1, seen} end
`;

/** GET KEYS[1], claimed. */
export const CLAIMED_GET = script(`${CLAIM}
local value = redis.call('GET', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return {0, value}
`);

/** HGET KEYS[1] ARGV[3], claimed. */
export const CLAIMED_HGET = script(`${CLAIM}
local value = redis.call('HGET', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return {0, value}
`);
