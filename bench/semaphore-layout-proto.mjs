// A prototype of another Redis layout for the semaphore (bench/NOTES.md, "A semaphore layout
// with one sorted set of holders"): holders in ONE sorted set, no permit key per holder, no due
// set, no holders hash. It (1) checks the prototype's scripts on a small scenario, then (2) times
// the Redis CPU of a contended acquisition (the waiter's queueing attempt while the semaphore is
// full + the holder's release that grants the head and publishes) for today's scripts (dist/),
// the prototype and redis-semaphore's own scripts (which poll), at limit 3 (3 holders, 9 waiters)
// and at limit 100 (100 holders, 20 waiters), on a redis-server of its own: INFO commandstats
// and the server process' CPU (/proc/<pid>/stat utime+stime, and INFO cpu), blocks of cycles
// interleaved round by round, medians over the rounds. Not part of `npm run bench`.
// Variants: "proto" (expiries pushed on by every call, as today), "lazy" (the expiry each key was
// given recorded in the set, and pushed on only when short), "lazy, commands only" (lazy's
// contended calls reduced to their commands: the layout's floor), the same with each grant
// written to 1 subscriber instead of 4, and the floor of any two-call protocol that wakes by
// PUBLISH (scripts that only answer / only publish). Each run writes bench/results/
// semaphore-layout-proto.json; bench/semaphore-layout-proto-pool.mjs pools several.
//   npm run build && node bench/semaphore-layout-proto.mjs [rounds, default 7] [acquisitions per block, default 2000]
//
// The prototype's layout for semaphore K with prefix P (lock name L = P{K}):
//   L:sh    sorted set. Holders: member <token> (and <token>#2 .. <token>#p for a holder of p
//           permits) scored by the holder's lease end in server time (ms, from TIME). Fields no
//           token can name (tokens have no ':' nor '#'), all scored <= 0 so that every range over
//           holders ('(0' .. ) skips them: f:<token> -> -(the holder's fencing token),
//           :limit -> -limit, :used -> -(permits held), :fence -> -(last fencing token handed out here), :queued -> 0
//           (set while anyone may be waiting). Expires with the longest lease it has guarded
//           (PEXPIRE GT on every grant and renewal) and the waiters' liveness lease.
//   L:sq, L:sw, L:sr, L:fence   today's queue list, waiters' liveness set, channel and counter.
// One member per permit; the permits held are also kept as the field :used -> -(permits held),
// read with the other fields (one ZMSCORE) and written with each grant's ZADD. Holders whose
// lease passed are dropped, and their permits subtracted, by ZREMRANGEBYSCORE (0 now (which
// answers how many permit members it removed), run by an acquire once the first holder's score
// has passed (their f: entries go too, on that rare path only).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';
import { startRedisServer } from '../scripts/redis-server.mjs';
import { SEMAPHORE_ACQUIRE, SEMAPHORE_RELEASE } from '../dist/core/semaphore/semaphore-lua.js';
import { COMMANDS } from '../dist/core/stores/redis/lock-lua.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const BLOCK = Number(process.argv[3] ?? 2000);
// Long leases: the blocks of one variant are minutes apart, and a waiter or holder left that
// long without its lease renewed would (rightly) be dropped.
const TTL = 600_000;
const WAITER_LEASE = 600_000;
const SUBSCRIBERS = 4; // family.mjs: 4 processes, each subscribed to the key's channel
// redis-semaphore polls: its acquire script calls per acquisition in family.mjs (bench/results/family.json
// of the twelfth session's quiet-machine run: 1.81 at limit 3, 1.07 at limit 100).
const PEER_FAILED_POLLS = { 3: 0.81, 100: 0.07 };
// LockService's PUBLISH per acquisition in the same runs: every acquisition queued at limit 3,
// 18% at limit 100 (the others found room and nobody queued).
const SHARE_QUEUED = { 3: 1, 100: 0.18 };

// ---------------------------------------------------------------------------------------------
// The prototype's scripts. KEYS[1] = L:sh; the other names derived from it (as today's derived
// layout does from the permit key); on a Cluster they would be declared.
const HEAD = `
local sh = KEYS[1]
local base = string.sub(sh, 1, #sh - 3)
local fence, queue, waiters, channel = base .. ':fence', base .. ':sq', base .. ':sw', base .. ':sr'
local t = nil
local now = 0
local function clock()
  t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/** What acquire and release share: taking permits, granting the queue's head(s), dropping lapsed holders. */
const PROTO_VARS = `
local used, stored, created, used_dirty = 0, false, false, false
-- lazy: the set's expiry as last set by these scripts (-(ms)), or false (unknown: extend).
local exp, slack = false, wl
`;
const PROTO_LIB = (lazy) => `
-- Whether the set must be pushed on to live until until_ms; when lazy, records the new expiry
-- (until_ms plus a slack of one waiter lease, so that the next calls need not push it) in args,
-- the ZADD the caller sends anyway.
local function must_extend(until_ms, args)
  ${lazy ? `if exp and exp >= until_ms then return false end
  exp = until_ms + slack
  args[#args + 1] = -exp; args[#args + 1] = ':exp'
  return exp - now` : `return until_ms - now`}
end
-- Gives tok p permits for ms: one ZADD of its permit members, its fencing entry, the fence
-- mirror (and the limit in a new set), then the set's expiry. Returns its fencing token.
local function take(tok, p, ms, lim)
  local fencing = redis.call('INCR', fence)
  if fence_retention ~= '0' then redis.call('PEXPIRE', fence, fence_retention) end
  local until_ms = now + ms
  local args = {until_ms, tok}
  for i = 2, p do args[#args + 1] = until_ms; args[#args + 1] = tok .. '#' .. i end
  args[#args + 1] = -fencing; args[#args + 1] = 'f:' .. tok
  args[#args + 1] = -fencing; args[#args + 1] = ':fence'
  used = used + p
  args[#args + 1] = -used; args[#args + 1] = ':used'
  used_dirty = false
  if not stored then args[#args + 1] = -lim; args[#args + 1] = ':limit'; stored = lim; created = true end
  local extend = must_extend(until_ms, args)
  redis.call('ZADD', sh, unpack(args))
  -- GT leaves a key without expiry without one: a set created by this call gets a plain PEXPIRE.
  if created then redis.call('PEXPIRE', sh, extend); created = false elseif extend then redis.call('PEXPIRE', sh, extend, 'GT') end
  return fencing
end

-- Drops holders whose lease passed (their permits are free), and their fencing entries: the
-- rare path (a crashed holder, or one that overran its lease). Answers how many permits it freed.
local function purge()
  local n = redis.call('ZREMRANGEBYSCORE', sh, '(0', now)
  if n == 0 then return 0 end
  used = math.max(0, used - n)
  redis.call('ZADD', sh, -used, ':used')
  local metas = redis.call('ZRANGEBYSCORE', sh, '-inf', 0)
  local toks, entries = {}, {}
  for _, m in ipairs(metas) do
    if string.sub(m, 1, 2) == 'f:' then toks[#toks + 1] = string.sub(m, 3); entries[#entries + 1] = m end
  end
  if #toks > 0 then
    local scores = redis.call('ZMSCORE', sh, unpack(toks))
    local gone = {}
    for i = 1, #toks do if not scores[i] then gone[#gone + 1] = entries[i] end end
    if #gone > 0 then redis.call('ZREM', sh, unpack(gone)) end
  end
  return n
end

-- A lost queue list rebuilt from the waiters set (evicted alone): true when it put members back.
local function restore_list()
  local lost = redis.call('ZRANGE', waiters, 0, -1)
  if #lost == 0 then return false end
  redis.call('DEL', queue)
  redis.call('RPUSH', queue, unpack(lost))
  redis.call('PEXPIRE', queue, wl)
  return true
end

-- Hands free permits to the waiters at the head, in order, while the next one fits (FIFO: a large
-- request is never overtaken). Reads the head and the one after it in one LRANGE, so that a grant
-- that took the last permit knows whether anyone is left (idle) without another read. Answers the
-- grants and whether the queue is idle (true), not (false) or unknown (nil).
local function grant_fitting(lim)
  local granted = {}
  local restored = false
  while true do
    if used >= lim then return granted, nil end
    local heads = redis.call('LRANGE', queue, 0, 1)
    if #heads == 0 then
      if restored or not restore_list() then return granted, true end
      restored = true
      heads = redis.call('LRANGE', queue, 0, 1)
    end
    local head = heads[1]
    local alive = redis.call('ZSCORE', waiters, head)
    local tok, ttl, p = string.match(head, '^(.+):([1-9]%d*):([1-9]%d*)$')
    local fencing
    if alive and tonumber(alive) >= now and tok then
      if tonumber(p) > lim - used then return granted, false end
      -- The permit first, then the queue: a call that failed halfway must not drop the waiter.
      fencing = take(tok, tonumber(p), math.min(tonumber(ttl), wl), lim)
    end
    redis.call('LPOP', queue)
    redis.call('ZREM', waiters, head)
    if fencing then
      redis.call(sharded == '1' and 'SPUBLISH' or 'PUBLISH', channel, tok .. ':' .. fencing)
      granted[#granted + 1] = tok
      granted[#granted + 1] = fencing
      if used >= lim then return granted, heads[2] == nil end
    end
  end
end
`;

/**
 * "hot" (lazy, with the contended calls' own paths first, before any function is defined and with
 * no call the general path would need): the queueing attempt while full, and the release whose
 * one grant fills the semaphore again. Anything else goes on to the general path below.
 */
const HOT_ACQUIRE = `
if enqueue == '1' and queued and stored == limit and used >= limit and not (first[2] and tonumber(first[2]) <= now)
  and not (m[4] and m[5] and tonumber(m[5]) > now) then
  local member = token .. ':' .. ARGV[2] .. ':' .. permits_arg
  local pushed = 0
  if redis.call('ZADD', waiters, now + wl, member) == 1 then
    pushed = redis.call('RPUSH', queue, member)
    if pushed == 1 and redis.call('ZCARD', waiters) > 1 then
      local lost = redis.call('ZRANGE', waiters, 0, -1)
      redis.call('DEL', queue)
      redis.call('RPUSH', queue, unpack(lost))
    end
  end
  local until_q = now + wl
  local marks
  if pushed == 1 or not qexp or qexp < until_q then
    redis.call('PEXPIRE', queue, wl + wl)
    redis.call('PEXPIRE', waiters, wl + wl)
    marks = {-(until_q + wl), ':qexp'}
  end
  if not exp or exp < until_q then
    marks = marks or {}
    marks[#marks + 1] = -(until_q + wl); marks[#marks + 1] = ':exp'
    redis.call('ZADD', sh, unpack(marks))
    redis.call('PEXPIRE', sh, wl + wl, 'GT')
  elseif marks then
    redis.call('ZADD', sh, unpack(marks))
  end
  return {0, first[2] and math.max(0, tonumber(first[2]) - now) or -1, m[3] and -tonumber(m[3]) or tonumber(redis.call('GET', fence) or '0')}
end
`;
const HOT_RELEASE = `
if m[2] and stored and permits == 1 then
  local left = (m[4] and -tonumber(m[4]) or 0) - 1
  if left < stored and left + 1 >= stored then
    local heads = redis.call('LRANGE', queue, 0, 1)
    local head = heads[1]
    local alive = head and redis.call('ZSCORE', waiters, head)
    local tok, httl, p
    if alive then tok, httl, p = string.match(head, '^(.+):([1-9]%d*):([1-9]%d*)$') end
    if alive and tonumber(alive) >= now and p == '1' then
      redis.call('ZREM', sh, token, 'f:' .. token)
      local fencing = redis.call('INCR', fence)
      if fence_retention ~= '0' then redis.call('PEXPIRE', fence, fence_retention) end
      local until_ms = now + math.min(tonumber(httl), wl)
      local args = {until_ms, tok, -fencing, 'f:' .. tok, -fencing, ':fence', -(left + 1), ':used'}
      local extend = not exp or exp < until_ms
      if extend then args[#args + 1] = -(until_ms + wl); args[#args + 1] = ':exp' end
      redis.call('ZADD', sh, unpack(args))
      if extend then redis.call('PEXPIRE', sh, until_ms + wl - now, 'GT') end
      redis.call('LPOP', queue)
      redis.call('ZREM', waiters, head)
      redis.call(sharded == '1' and 'SPUBLISH' or 'PUBLISH', channel, tok .. ':' .. fencing)
      if not heads[2] then redis.call('ZREM', sh, ':queued') end
      return {1, tok, fencing}
    end
  end
end
`;

/**
 * ARGV: token, ttl, `<fence retention>:<waiter lease>:<sharded>:<enqueue>:<limit>:<permits>` (today's).
 * Answers {1, fencing}, {0, soonest lease left (-1: none), fence} or {2, limit in use}.
 * Queued while full: ZMSCORE, TIME, ZRANGEBYSCORE (first holder), ZADD, RPUSH, PEXPIRE x3.
 */
const PROTO_ACQUIRE = (lazy, hot = false) => `${HEAD}
local token, ttl = ARGV[1], tonumber(ARGV[2])
local fence_retention, lease, sharded, enqueue, limit_arg, permits_arg = string.match(ARGV[3], '^(%d+):(%d+):(%d):(%d):(%d+):(%d+)$')
local limit, permits, wl = tonumber(limit_arg), tonumber(permits_arg), tonumber(lease)
${PROTO_VARS}${hot ? '' : PROTO_LIB(lazy)}
-- The set's fields and the caller's own: its fencing entry and its lease end (both: it holds).
local m = redis.call('ZMSCORE', sh, ':limit', ':queued', ':fence', 'f:' .. token, token, ':used', ':exp', ':qexp')
clock()
stored = m[1] and -tonumber(m[1])
local queued = m[2]
used = m[6] and -tonumber(m[6]) or 0
exp = m[7] and -tonumber(m[7])
local qexp = m[8] and -tonumber(m[8])
-- The first holder: its lease end is the answer's soonest deadline, and once it has passed the
-- lapsed holders go (purge), the only time a call looks at them.
local first = redis.call('ZRANGEBYSCORE', sh, '(0', '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
${hot ? HOT_ACQUIRE + PROTO_LIB(lazy) : ''}
if first[2] and tonumber(first[2]) <= now then
  purge()
  first = redis.call('ZRANGEBYSCORE', sh, '(0', '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
end
if stored and stored ~= limit then
  if used > 0 or queued then return {2, stored} end
  -- Nobody holds or waits: the old limit is forgotten.
  redis.call('DEL', sh)
  stored, m, used, exp, qexp = false, {}, 0, false, false
end
-- Granted already (by a release): the lease restarts at ttl.
if m[4] and m[5] and tonumber(m[5]) > now then
  local args = {}
  for i = 1, permits do args[#args + 1] = now + ttl; args[#args + 1] = i == 1 and token or token .. '#' .. i end
  local extend = must_extend(now + ttl, args)
  redis.call('ZADD', sh, unpack(args))
  if extend then redis.call('PEXPIRE', sh, extend, 'GT') end
  return {1, -tonumber(m[4])}
end
if not queued and used + permits <= limit then
  created = not stored
  return {1, take(token, permits, ttl, limit)}
end
local member = token .. ':' .. ttl .. ':' .. permits
if queued and used < limit then
  -- Others are owed free permits first; the grants may reach this caller.
  local given, idle = grant_fitting(stored or limit)
  for i = 1, #given, 2 do
    if given[i] == token then
      -- Granted at the grant lease: its own ttl now.
      local args = {}
      for j = 1, permits do args[#args + 1] = now + ttl; args[#args + 1] = j == 1 and token or token .. '#' .. j end
      local extend = must_extend(now + ttl, args)
      redis.call('ZADD', sh, unpack(args))
      if extend then redis.call('PEXPIRE', sh, extend, 'GT') end
      if idle then redis.call('ZREM', sh, ':queued') end
      return {1, given[i + 1]}
    end
  end
  if idle then
    queued = false
    redis.call('ZREM', sh, ':queued')
    if used + permits <= limit then return {1, take(token, permits, ttl, limit)} end
  end
end
if enqueue == '1' then
  local pushed = 0
  if redis.call('ZADD', waiters, now + wl, member) == 1 then
    pushed = redis.call('RPUSH', queue, member)
    -- A new list beside an older waiters set: the list was lost (evicted alone), rebuilt.
    if pushed == 1 and redis.call('ZCARD', waiters) > 1 then restore_list() end
  end
  -- What the set gets written (one ZADD, when anything): the mark, the limit, the expiries.
  local marks = {}
  if not queued then marks[#marks + 1] = 0; marks[#marks + 1] = ':queued' end
  if not stored then marks[#marks + 1] = -limit; marks[#marks + 1] = ':limit' end
  ${lazy ? `-- The queue keys' expiry, as last set (':qexp'): pushed on only when a waiter would outlive
  -- it, by a waiter lease more (a new list has none: pushed is 1).
  if pushed == 1 or not qexp or qexp < now + wl then
    redis.call('PEXPIRE', queue, wl + slack)
    redis.call('PEXPIRE', waiters, wl + slack)
    marks[#marks + 1] = -(now + wl + slack); marks[#marks + 1] = ':qexp'
  end` : `redis.call('PEXPIRE', queue, wl)
  redis.call('PEXPIRE', waiters, wl)`}
  local extend = must_extend(now + wl, marks)
  if #marks > 0 then redis.call('ZADD', sh, unpack(marks)) end
  if not stored then redis.call('PEXPIRE', sh, extend) elseif extend then redis.call('PEXPIRE', sh, extend, 'GT') end
end
local soonest = first[2] and math.max(0, tonumber(first[2]) - now) or -1
return {0, soonest, m[3] and -tonumber(m[3]) or tonumber(redis.call('GET', fence) or '0')}
`;

/**
 * ARGV: token, `<fence retention>:<waiter lease>:<sharded>:<limit>:<permits>`. Answers {0} (not the
 * caller's: gone, or its lease passed) or {1, token, fencing...} for the waiters it went to.
 * Granting one: ZMSCORE, TIME, ZREM, LRANGE, ZSCORE, INCR, ZADD, PEXPIRE, LPOP, ZREM, PUBLISH.
 */
const PROTO_RELEASE = (lazy, hot = false) => `${HEAD}
local token = ARGV[1]
local fence_retention, lease, sharded, limit_arg, permits_arg = string.match(ARGV[2], '^(%d+):(%d+):(%d):(%d+):(%d+)$')
local limit, permits, wl = tonumber(limit_arg), tonumber(permits_arg), tonumber(lease)
${PROTO_VARS}${hot ? '' : PROTO_LIB(lazy)}
local m = redis.call('ZMSCORE', sh, ':limit', ':queued', token, ':used', ':exp')
clock()
-- Not the caller's: gone, or its lease passed (a later count drops it).
if not m[3] or tonumber(m[3]) <= now then return {0} end
stored = m[1] and -tonumber(m[1])
exp = m[5] and -tonumber(m[5])
${hot ? HOT_RELEASE + PROTO_LIB(lazy) : ''}
local gone = {token, 'f:' .. token}
for i = 2, permits do gone[#gone + 1] = token .. '#' .. i end
redis.call('ZREM', sh, unpack(gone))
-- Holders whose lease passed still count until the next acquire drops them (never too many in).
used = math.max(0, (m[4] and -tonumber(m[4]) or 0) - permits)
if not m[2] then
  if used == 0 then redis.call('DEL', sh) else redis.call('ZADD', sh, -used, ':used') end
  return {1}
end
used_dirty = true
local granted, idle = grant_fitting(stored or limit)
if idle and used == 0 then
  redis.call('DEL', sh)
elseif idle then
  redis.call('ZADD', sh, -used, ':used')
  redis.call('ZREM', sh, ':queued')
elseif used_dirty then
  redis.call('ZADD', sh, -used, ':used')
end
table.insert(granted, 1, 1)
return granted
`;

/** KEYS[1] = L:sh. ARGV: token, ttl, permits. TIME, ZMSCORE, ZADD XX, PEXPIRE GT. Answers 1, or 0 (lost). */
const PROTO_RENEW = (lazy) => `
local sh = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local m = redis.call('ZMSCORE', sh, ARGV[1], ':exp')
if not m[1] or tonumber(m[1]) <= now then return 0 end
local until_ms = now + tonumber(ARGV[2])
local args = {until_ms, ARGV[1]}
for i = 2, tonumber(ARGV[3]) do args[#args + 1] = until_ms; args[#args + 1] = ARGV[1] .. '#' .. i end
${lazy ? `-- The set's recorded expiry (':exp', pushed on by a waiter lease more, see must_extend).
local exp = m[2] and -tonumber(m[2])
local extend = not exp or exp < until_ms
if extend and exp then args[#args + 1] = -(until_ms + 5000); args[#args + 1] = ':exp' end
redis.call('ZADD', sh, 'XX', unpack(args))
if extend then redis.call('PEXPIRE', sh, until_ms + 5000 - now, 'GT') end` : `redis.call('ZADD', sh, 'XX', unpack(args))
redis.call('PEXPIRE', sh, ARGV[2], 'GT')`}
return 1
`;

/**
 * The lazy layout's two contended calls reduced to their commands, with as little Lua as can
 * send them (no parsing beyond the head's token, no functions, no branches): what the layout
 * costs Redis whatever its scripts' logic, so the lower bound of any script for it. Driven on a
 * semaphore the lazy scripts set up, they keep its data as the real calls would (the release
 * hands the head the permit its caller gives back; the acquire queues its caller).
 */
const LEAN_ACQUIRE = `
local sh, token = KEYS[1], ARGV[1]
local base = string.sub(sh, 1, #sh - 3)
local m = redis.call('ZMSCORE', sh, ':limit', ':queued', ':fence', 'f:' .. token, token, ':used', ':exp', ':qexp')
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local first = redis.call('ZRANGEBYSCORE', sh, '(0', '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local member = token .. ':' .. ARGV[2] .. ':1'
if redis.call('ZADD', base .. ':sw', now + ${WAITER_LEASE}, member) == 1 then redis.call('RPUSH', base .. ':sq', member) end
return {0, first[2] - now, -m[3]}
`;
const LEAN_RELEASE = `
local sh, token = KEYS[1], ARGV[1]
local base = string.sub(sh, 1, #sh - 3)
local queue, waiters = base .. ':sq', base .. ':sw'
local m = redis.call('ZMSCORE', sh, ':limit', ':queued', token, ':used', ':exp')
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREM', sh, token, 'f:' .. token)
local heads = redis.call('LRANGE', queue, 0, 1)
redis.call('ZSCORE', waiters, heads[1])
local tok, ttl = string.match(heads[1], '^([^:]+):(%d+)')
local fencing = redis.call('INCR', base .. ':fence')
redis.call('ZADD', sh, now + ttl, tok, -fencing, 'f:' .. tok, -fencing, ':fence', m[4], ':used')
redis.call('LPOP', queue)
redis.call('ZREM', waiters, heads[1])
redis.call('PUBLISH', base .. ':sr', tok .. ':' .. fencing)
return {1, tok, fencing}
`;

// ---------------------------------------------------------------------------------------------
const server = await startRedisServer();
const redis = new Redis(server.url);
const admin = new Redis(server.url);
const pid = Number(/process_id:(\d+)/.exec(await admin.info('server'))[1]);
const TICK_US = 1e6 / Number((await import('node:child_process')).execSync('getconf CLK_TCK').toString().trim());
const procCpuUs = () => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US; // utime, stime (fields 14, 15)
};
const mainThreadCpuUs = async () => {
  const info = await admin.info('cpu');
  const f = (n) => Number(new RegExp(`^${n}:([\\d.]+)`, 'm').exec(info)[1]);
  return (f('used_cpu_user_main_thread') + f('used_cpu_sys_main_thread')) * 1e6;
};
const sha = {};
for (const [name, lua] of Object.entries({
  todayAcquire: SEMAPHORE_ACQUIRE.derived, todayRelease: SEMAPHORE_RELEASE.derived, todayRenew: COMMANDS.renew.lua,
  // The floor of any two-call protocol that wakes by PUBLISH: a queueing attempt that does
  // nothing, and a release that only publishes the grant.
  floorAcquire: 'return {0, 100, 5}', floorRelease: "redis.call('PUBLISH', KEYS[1], ARGV[1] .. ':7') return {1, ARGV[1], 7}",
  protoAcquire: PROTO_ACQUIRE(false), protoRelease: PROTO_RELEASE(false), protoRenew: PROTO_RENEW(false),
  leanAcquire: LEAN_ACQUIRE, leanRelease: LEAN_RELEASE,
  hotAcquire: PROTO_ACQUIRE(true, true), hotRelease: PROTO_RELEASE(true, true), hotRenew: PROTO_RENEW(true),
  lazyAcquire: PROTO_ACQUIRE(true), lazyRelease: PROTO_RELEASE(true), lazyRenew: PROTO_RENEW(true),
})) sha[name] = await admin.script('LOAD', lua);
const require = createRequire(import.meta.url);
const { acquireLua: peerAcquireLua } = require('redis-semaphore/lib/semaphore/acquire/lua.js');

const settings = (enqueue, limit, permits = 1) => `0:${WAITER_LEASE}:0:${enqueue ? 1 : 0}:${limit}:${permits}`;

/** Today's scripts (dist/), derived layout (the permit key declared alone, as off a Cluster). */
function today(key, limit) {
  const lock = `lock:{${key}}`;
  const permit = (token) => `${lock}:permit:${token}`;
  return {
    channel: `${lock}:sr`,
    acquire: (token, ttl = TTL) => redis.evalsha(sha.todayAcquire, 1, permit(token), token, ttl, settings(true, limit)),
    release: (token) => redis.evalsha(sha.todayRelease, 1, permit(token), token, `0:${WAITER_LEASE}:0:${limit}`),
    renew: (token, ttl = TTL) => redis.evalsha(sha.todayRenew, 1, permit(token), token, ttl),
  };
}
function proto(key, limit, permits = 1, variant = 'proto') {
  const lock = `lock:{${key}}`;
  const sh = `${lock}:sh`;
  return {
    channel: `${lock}:sr`, sh, lock,
    acquire: (token, ttl = TTL, p = permits) => redis.evalsha(sha[`${variant}Acquire`], 1, sh, token, ttl, settings(true, limit, p)),
    release: (token, p = permits) => redis.evalsha(sha[`${variant}Release`], 1, sh, token, `0:${WAITER_LEASE}:0:${limit}:${p}`),
    renew: (token, ttl = TTL, p = permits) => redis.evalsha(sha[`${variant}Renew`], 1, sh, token, ttl, p),
  };
}

// ---------------------------------------------------------------------------------------------
// (1) The prototype on a small scenario.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
function check(what, ok, detail) {
  if (!ok) throw new Error(`prototype check failed: ${what} ${JSON.stringify(detail)}`);
  console.log(`  ok  ${what}`);
}
async function functional(variant) {
  console.log(`(1) the prototype (${variant}), limit 3:`);
  await admin.flushall();
  const s = proto('check', 3, 1, variant);
  const messages = [];
  const sub = new Redis(server.url);
  await sub.subscribe(s.channel);
  sub.on('message', (_, message) => messages.push(message));
  const fences = {};
  for (const [t, ttl] of [['A', TTL], ['B', TTL], ['C', 300]]) {
    const r = await s.acquire(t, ttl);
    check(`${t} acquires (room)`, r[0] === 1, r);
    fences[t] = r[1];
  }
  check('fencing tokens grow', fences.A < fences.B && fences.B < fences.C, fences);
  const d = await s.acquire('D');
  check('D queued while full, answer {0, soonest, fence}', d[0] === 0 && d[1] > 0 && d[1] <= 300 && d[2] === fences.C, d);
  const e = await s.acquire('E');
  check('E queued behind D', e[0] === 0 && (await redis.lrange(`${s.lock}:sq`, 0, -1)).join() === `D:${TTL}:1,E:${TTL}:1`, e);
  check('D asking again keeps one place', (await s.acquire('D'))[0] === 0 && (await redis.llen(`${s.lock}:sq`)) === 2);
  check('renewal of a holder', (await s.renew('A')) === 1);
  check('renewal of a non-holder refused', (await s.renew('E')) === 0 && (await s.renew('Z')) === 0);
  const rel = await s.release('A');
  check('release of A grants the head D (FIFO), with its fencing token', rel[0] === 1 && rel[1] === 'D' && rel[2] > fences.C && rel.length === 3, rel);
  fences.D = rel[2];
  await sleep(50);
  check('D was told by PUBLISH', messages.includes(`D:${fences.D}`), messages);
  check('D asking again (granted already) gets its fencing token', JSON.stringify(await s.acquire('D')) === JSON.stringify([1, fences.D]));
  check('A released twice: not its own any more', (await s.release('A'))[0] === 0);
  const f = await s.acquire('F');
  check('F queued behind E', f[0] === 0 && (await redis.lrange(`${s.lock}:sq`, 0, -1)).join() === `E:${TTL}:1,F:${TTL}:1`);
  await sleep(350); // C's lease (300 ms) has passed on Redis' clock
  check('C cannot renew once its lease passed', (await s.renew('C', TTL)) === 0);
  const f2 = await s.acquire('F');
  check("F's next count frees C's permit, which goes to E, ahead of F (FIFO)", f2[0] === 0 && (await redis.lrange(`${s.lock}:sq`, 0, -1)).join() === `F:${TTL}:1`, f2);
  await sleep(50);
  const eMsg = messages.find((x) => x.startsWith('E:'));
  check('E was told by PUBLISH', eMsg !== undefined, messages);
  fences.E = Number(eMsg.split(':')[1]);
  check("C's member and fencing entry are gone; 3 permits held", (await redis.zscore(s.sh, 'C')) === null && (await redis.zscore(s.sh, 'f:C')) === null && (await redis.zcount(s.sh, '(0', '+inf')) === 3 && Number(await redis.zscore(s.sh, ':used')) === -3);
  check('C released after its lease: not its own', (await s.release('C'))[0] === 0);
  const relB = await s.release('B');
  check(':used counts the holders after the grants', Number(await redis.zscore(s.sh, ':used')) === -(await redis.zcount(s.sh, '(0', '+inf')));
  check('release of B grants F', relB[1] === 'F' && relB.length === 3, relB);
  check('the queue is idle: mark dropped, queue keys gone', (await redis.zscore(s.sh, ':queued')) === null && (await redis.exists(`${s.lock}:sq`, `${s.lock}:sw`)) === 0);
  check('another limit is refused while in use', JSON.stringify(await redis.evalsha(sha[`${variant}Acquire`], 1, s.sh, 'X', TTL, settings(true, 5))) === '[2,3]');
  // A holder of 2 permits: two members, renewed and released together.
  for (const t of ['D', 'E', 'F']) check(`${t} releases (nobody waiting)`, JSON.stringify(await s.release(t)) === '[1]');
  check('the last release deletes the set (the limit is forgotten)', (await redis.exists(s.sh)) === 0);
  const g = await s.acquire('G', TTL, 2);
  check('G takes 2 permits: 2 members', g[0] === 1 && (await redis.zcount(s.sh, '(0', '+inf')) === 2 && Number(await redis.zscore(s.sh, ':used')) === -2);
  check('H (2 permits) queued: 1 left does not fit', (await s.acquire('H', TTL, 2))[0] === 0);
  check('I (1 permit) queued behind H, not let in ahead of it (FIFO)', (await s.acquire('I', TTL, 1))[0] === 0);
  check('G renews both members', (await s.renew('G', TTL, 2)) === 1);
  const relG = await s.release('G', 2);
  check('release of G grants H (2) and I (1) in order', relG.length === 5 && relG[1] === 'H' && relG[3] === 'I', relG);
  check('expiry of the set is the longest lease guarded', (await redis.pttl(s.sh)) > TTL - 1000);
  await sub.quit();
}

// ---------------------------------------------------------------------------------------------
// (2) The contended cycle, per acquisition: the oldest holder releases (granting the head of the
// queue), and the released caller asks again and is queued at the tail (the semaphore is full).
async function setupOurs(kind, key, limit, waiting) {
  const s = kind === 'today' ? today(key, limit) : proto(key, limit, 1, kind === 'lean' ? 'lazy' : kind);

  const holders = [];
  const queue = [];
  let n = 0;
  for (let i = 0; i < limit; i++) {
    const t = `${kind}h${n++}`;
    const r = await s.acquire(t);
    if (r !== undefined && !(typeof r === 'number' || r[0] === 1)) throw new Error(`${kind}: holder ${t} refused ${JSON.stringify(r)}`);
    holders.push(t);
  }
  for (let i = 0; i < waiting; i++) {
    const t = `${kind}w${n++}`;
    const r = await s.acquire(t);
    if (r[0] !== 0) throw new Error(`${kind}: waiter ${t} not queued ${JSON.stringify(r)}`);
    queue.push(t);
  }
  if (kind === 'lean') {
    s.acquire = (token, ttl = TTL) => redis.evalsha(sha.leanAcquire, 1, s.sh, token, ttl, settings(true, limit));
    s.release = (token) => redis.evalsha(sha.leanRelease, 1, s.sh, token, `0:${WAITER_LEASE}:0:${limit}:1`);
  }
  return {
    channel: s.channel,
    async acquisition() {
      const h = holders.shift();
      const rel = await s.release(h);
      if (rel[0] !== 1 || rel[1] !== queue[0] || rel.length !== 3) throw new Error(`${kind}: release ${JSON.stringify(rel)} expected ${queue[0]}`);
      holders.push(queue.shift());
      const r = await s.acquire(h);
      if (r[0] !== 0) throw new Error(`${kind}: re-queue ${JSON.stringify(r)}`);
      queue.push(h);
    },
    // A holder renewing its lease (the watchdog, each third of a ttl).
    async renewal(i) {
      const r = await s.renew(holders[i % holders.length]);
      if (r !== 1) throw new Error(`${kind}: renew ${r}`);
    },
  };
}

/**
 * The same semaphore with nobody waiting (limit holders, no queue): the oldest holder releases
 * and a new caller takes the permit it freed (the fast paths). family.mjs' limit-100 run is
 * mostly this: 0.18 PUBLISH per acquisition, so 82% of its acquisitions queue nobody.
 */
async function setupNobody(kind, key, limit) {
  const s = kind === 'today' ? today(key, limit) : proto(key, limit, 1, kind);
  const holders = [];
  let n = 0;
  for (let i = 0; i < limit; i++) {
    const t = `${kind}n${n++}`;
    const r = await s.acquire(t);
    if (!(typeof r === 'number' || r[0] === 1)) throw new Error(`${kind}: holder ${t} refused`);
    holders.push(t);
  }
  return {
    async acquisition() {
      const h = holders.shift();
      const rel = await s.release(h);
      if (rel[0] !== 1 || rel.length !== 1) throw new Error(`${kind}: nobody-waiting release ${JSON.stringify(rel)}`);
      const t = `${kind}n${n++}`;
      const r = await s.acquire(t);
      if (!(typeof r === 'number' || r[0] === 1)) throw new Error(`${kind}: nobody-waiting acquire ${JSON.stringify(r)}`);
      holders.push(t);
    },
  };
}

/** The floor (see floorAcquire): the release publishing on a channel, the attempt doing nothing. */
function floor(key) {
  const channel = `lock:{${key}}:sr`;
  return {
    channel,
    async acquisition(i) {
      await redis.evalsha(sha.floorRelease, 1, channel, `w${i}`);
      await redis.evalsha(sha.floorAcquire, 1, `lock:{${key}}:sh`, `h${i}`, TTL, settings(true, 3));
    },
  };
}

/** redis-semaphore's Semaphore: its acquire script (polled) and its release (a plain ZREM). */
async function setupPeer(key, limit, waiting) {
  const zkey = `semaphore:${key}`;
  const holders = [];
  const waiters = [];
  let n = 0;
  const attempt = (id) => peerAcquireLua(redis, [zkey, limit, id, TTL, Date.now()]);
  for (let i = 0; i < limit; i++) {
    const id = `p${n++}`;
    if ((await attempt(id)) !== 1) throw new Error('peer holder');
    holders.push(id);
  }
  for (let i = 0; i < waiting; i++) waiters.push(`p${n++}`);
  let poller = 0;
  return {
    // A failed attempt of a waiter while the semaphore is full.
    async failedPoll() {
      const id = waiters[poller++ % waiters.length];
      if ((await attempt(id)) !== 0) throw new Error('peer poll acquired');
    },
    // The oldest holder's release, then the next waiter's successful attempt.
    async acquisition() {
      const h = holders.shift();
      await redis.zrem(zkey, h);
      const w = waiters.shift();
      if ((await attempt(w)) !== 1) throw new Error('peer acquire');
      holders.push(w);
      waiters.push(h);
    },
  };
}

const OWN = new Set(['info', 'config', 'config|resetstat', 'flushall', 'script', 'script|load', 'ping', 'subscribe', 'quit', 'client', 'client|setname']);
async function measureBlock(run) {
  const started = Date.now();
  await admin.config('RESETSTAT');
  const proc0 = procCpuUs();
  const main0 = await mainThreadCpuUs();
  const count = await run();
  const main1 = await mainThreadCpuUs();
  const proc1 = procCpuUs();
  const info = await admin.info('commandstats');
  const stats = {};
  for (const [, name, calls, usec] of info.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)) if (!OWN.has(name)) stats[name] = { calls: Number(calls) / count, usec: Number(usec) / count };
  const evalsha = stats.evalsha ?? { calls: 0, usec: 0 };
  const inner = Object.entries(stats).filter(([name]) => name !== 'evalsha');
  if (process.env.VERBOSE) console.log(`  block of ${count}: ${Date.now() - started} ms`);
  return {
    procUs: (proc1 - proc0) / count,
    mainUs: (main1 - main0) / count,
    evalshaUs: evalsha.usec,
    evalshaCalls: evalsha.calls,
    commandUs: Object.values(stats).reduce((a, s) => a + s.usec, 0), // EVALSHA (inner included) + plain commands (the peer's ZREM)
    innerCalls: inner.reduce((a, [, s]) => a + s.calls, 0),
    innerUs: inner.reduce((a, [, s]) => a + s.usec, 0),
    perCommand: Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, +v.calls.toFixed(2)])),
  };
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

async function scenario(limit, waiting) {
  await admin.flushall();
  const subs = [];
  const built = {
    today: await setupOurs('today', `t${limit}`, limit, waiting),
    proto: await setupOurs('proto', `p${limit}`, limit, waiting),
    lazy: await setupOurs('lazy', `l${limit}`, limit, waiting),
    lean: await setupOurs('lean', `n${limit}`, limit, waiting),
    hot: await setupOurs('hot', `h${limit}`, limit, waiting),
    // The same, each grant written to one subscribed process instead of four (a channel per process).
    today1: await setupOurs('today', `t1${limit}`, limit, waiting),
    lazy1: await setupOurs('lazy', `l1${limit}`, limit, waiting),
    peer: await setupPeer(`r${limit}`, limit, waiting),
    floor4: floor(`f4${limit}`),
    floor1: floor(`f1${limit}`),
    todayNobody: await setupNobody('today', `tn${limit}`, limit),
    protoNobody: await setupNobody('proto', `pn${limit}`, limit),
    lazyNobody: await setupNobody('lazy', `ln${limit}`, limit),
  };
  // 4 processes subscribed to each of our channels, as in family.mjs: each grant is written to all four.
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const sub = new Redis(server.url);
    await sub.subscribe(built.today.channel, built.proto.channel, built.lazy.channel, built.lean.channel, built.hot.channel, built.floor4.channel);
    if (i === 0) await sub.subscribe(built.floor1.channel, built.today1.channel, built.lazy1.channel);
    subs.push(sub);
  }
  // Warm-up.
  for (let i = 0; i < 300; i++) { await built.todayNobody.acquisition(); await built.protoNobody.acquisition(); await built.lazyNobody.acquisition(); await built.lazy.acquisition(); await built.lean.acquisition(); await built.hot.acquisition(); await built.lazy1.acquisition(); await built.today1.acquisition(); await built.today.acquisition(); await built.proto.acquisition(); await built.peer.acquisition(); await built.peer.failedPoll(); }
  const blocks = {
    today: () => loop(BLOCK, () => built.today.acquisition()),
    proto: () => loop(BLOCK, () => built.proto.acquisition()),
    lazy: () => loop(BLOCK, () => built.lazy.acquisition()),
    'lazy, commands only': () => loop(BLOCK, () => built.lean.acquisition()),
    'lazy, hot paths first': () => loop(BLOCK, () => built.hot.acquisition()),
    'today, PUBLISH to 1 subscriber': () => loop(BLOCK, () => built.today1.acquisition()),
    'lazy, PUBLISH to 1 subscriber': () => loop(BLOCK, () => built.lazy1.acquisition()),
    'peer acquisition (release + 1 successful attempt)': () => loop(BLOCK, () => built.peer.acquisition()),
    'peer failed poll': () => loop(BLOCK, () => built.peer.failedPoll()),
    'today renewal': () => loop(BLOCK, (i) => built.today.renewal(i)),
    'proto renewal': () => loop(BLOCK, (i) => built.proto.renewal(i)),
    'lazy renewal': () => loop(BLOCK, (i) => built.lazy.renewal(i)),
    'floor, PUBLISH to 4 subscribers': () => loop(BLOCK, (i) => built.floor4.acquisition(i)),
    'floor, PUBLISH to 1 subscriber': () => loop(BLOCK, (i) => built.floor1.acquisition(i)),
    'today nobody waiting': () => loop(BLOCK, () => built.todayNobody.acquisition()),
    'proto nobody waiting': () => loop(BLOCK, () => built.protoNobody.acquisition()),
    'lazy nobody waiting': () => loop(BLOCK, () => built.lazyNobody.acquisition()),
  };
  const results = Object.fromEntries(Object.keys(blocks).map((k) => [k, []]));
  const names = Object.keys(blocks);
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved: each round runs every block once, in a rotated order.
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length];
      results[name].push(await measureBlock(blocks[name]));
    }
  }
  for (const sub of subs) await sub.quit();
  return results;
}
async function loop(n, body) {
  for (let i = 0; i < n; i++) await body(i);
  return n;
}

function report(title, limit, results) {
  const F = PEER_FAILED_POLLS[limit];
  const rows = {};
  const fields = ['procUs', 'mainUs', 'commandUs', 'evalshaUs', 'innerUs', 'evalshaCalls', 'innerCalls'];
  const med = (name, field) => median(results[name].map((r) => r[field]));
  for (const name of Object.keys(results)) rows[name] = Object.fromEntries(fields.map((f) => [f, +med(name, f).toFixed(2)]));
  // redis-semaphore per acquisition: its release and successful attempt, plus F failed attempts,
  // combined round by round (each round's blocks), then the median.
  const peerPer = (field, polls) => results['peer acquisition (release + 1 successful attempt)'].map((r, i) => r[field] + polls * results['peer failed poll'][i][field]);
  const peerRow = (polls) => Object.fromEntries(fields.map((f) => [f, +median(peerPer(f, polls)).toFixed(2)]));
  rows[`peer per acquisition, ${F} failed polls`] = peerRow(F);
  rows['peer per acquisition, 0 failed polls'] = peerRow(0);
  console.log(`\n${title} (${ROUNDS} rounds x ${BLOCK}; us per acquisition or call, medians)`);
  console.table(rows);
  const ratio = (name, field, polls) => median(results[name].map((r, i) => r[field] / peerPer(field, polls)[i]));
  for (const polls of [F, 0]) {
    console.log(`  x redis-semaphore (${polls} failed polls per acquisition), medians of per-round ratios:`);
    for (const name of ['today', 'proto', 'lazy', 'lazy, commands only', 'lazy, hot paths first', 'today, PUBLISH to 1 subscriber', 'lazy, PUBLISH to 1 subscriber']) console.log(`    ${name.padEnd(30)} process CPU ${ratio(name, 'procUs', polls).toFixed(2)}x  main thread ${ratio(name, 'mainUs', polls).toFixed(2)}x  commandstats ${ratio(name, 'commandUs', polls).toFixed(2)}x`);
  }
  for (const name of ['floor, PUBLISH to 4 subscribers', 'floor, PUBLISH to 1 subscriber']) console.log(`  ${name} x redis-semaphore (${F} failed polls): process CPU ${ratio(name, 'procUs', F).toFixed(2)}x  main thread ${ratio(name, 'mainUs', F).toFixed(2)}x`);
  for (const kind of ['proto', 'lazy']) {
    const x = (a, b, field) => median(results[a].map((r, i) => r[field] / results[b][i][field])).toFixed(2);
    console.log(`  ${kind} / today: contended main thread ${x(kind, 'today', 'mainUs')}x, commandstats ${x(kind, 'today', 'commandUs')}x; nobody waiting main thread ${x(`${kind} nobody waiting`, 'today nobody waiting', 'mainUs')}x; renewal main thread ${x(`${kind} renewal`, 'today renewal', 'mainUs')}x, commandstats ${x(`${kind} renewal`, 'today renewal', 'commandUs')}x`);
  }
  // family.mjs' mix at this limit: the share of acquisitions that queued (its PUBLISH per acquisition).
  const q = SHARE_QUEUED[limit];
  const mix = (kind, field, i) => q * results[kind][i][field] + (1 - q) * results[`${kind} nobody waiting`][i][field];
  console.log(`  family.mjs' mix (${q} of acquisitions queued, the rest nobody waiting), x redis-semaphore (${F} failed polls):`);
  for (const kind of ['today', 'proto', 'lazy']) {
    const r = (field) => median(results[kind].map((_, i) => mix(kind, field, i) / peerPer(field, F)[i]));
    console.log(`    ${kind.padEnd(6)} process CPU ${r('procUs').toFixed(2)}x  main thread ${r('mainUs').toFixed(2)}x  commandstats ${r('commandUs').toFixed(2)}x  (main thread ${median(results[kind].map((_, i) => mix(kind, 'mainUs', i))).toFixed(1)} us)`);
  }
  for (const name of ['today', 'proto', 'lazy', 'today nobody waiting', 'proto nobody waiting', 'lazy nobody waiting', 'today renewal', 'proto renewal', 'lazy renewal']) console.log(`  commands per acquisition, ${name}: ${JSON.stringify(results[name].at(-1).perCommand)}`);
  return rows;
}

try {
  await functional('proto');
  await functional('lazy');
  await functional('hot');
  if (!process.argv.includes('--check-only')) {
    console.log(`\n(2) load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}, redis-server pid ${pid}, ${(await admin.info('server')).match(/redis_version:(\S+)/)[1]}`);
    const out = {};
    const raw = {};
    raw.limit3 = await scenario(3, 9);
    out.limit3 = report('limit 3: 3 holders, 9 waiters', 3, raw.limit3);
    raw.limit100 = await scenario(100, 20);
    out.limit100 = report('limit 100: 100 holders, 20 waiters', 100, raw.limit100);
    (await import('node:fs')).mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    (await import('node:fs')).writeFileSync(new URL('./results/semaphore-layout-proto.json', import.meta.url), JSON.stringify({ rounds: ROUNDS, block: BLOCK, raw, ...out }, null, 2));
    console.log(`load average after ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  }
} finally {
  redis.disconnect();
  await admin.quit();
  await server.stop();
}
