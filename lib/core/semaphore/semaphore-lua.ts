import { LOCK_KEY_SUFFIXES } from '../keys/lock-key.js';
import { CHECK_FENCING, nextFencingUndoing } from '../stores/redis/fence-lua.js';
import { QUEUE_MEMBERS, QUEUE_READABLE } from '../stores/redis/queue-lua.js';
import { SEMAPHORE_SUFFIXES } from './semaphore-keys.js';
/**
 * The counting semaphore's scripts. Their keys: own permit, fence, queue, waiters, release
 * channel, holders, due (see `semaphore-keys.ts`), all in the `{key}` Cluster slot. On a Cluster
 * all seven are declared (only declared keys route a call and follow a slot migration);
 * anywhere else only the permit is, and the script derives the other six from it and the
 * caller's token (see `SEMAPHORE_KEYS`). The permits of other holders
 * (`<base>:permit:<token>`) are in that slot too, so the scripts may read them undeclared.
 *
 * A permit is a plain key holding its owner token with the holder's lease as expiry, so a
 * crashed holder's permit disappears on Redis's clock, and renewals are the mutex's. The
 * holders hash says who holds how many permits with which fencing token, and keeps the limit
 * (`:limit`) and the permits held in all (`:used`) in two fields no token can name (tokens
 * have no `:`). The due set scores each holder with the server time until which its permit is
 * known to live: only holders whose score has passed are looked at (one `PTTL` each: gone,
 * their permits are freed; renewed meanwhile, their score moves on), so counting costs
 * O(log holders) rather than a `PTTL` per holder. Queue members are `<token>:<ttl>:<permits>`,
 * with the mutex's liveness leases on the server clock (`TIME`). A holder alone, off a Cluster,
 * is kept in a form of its own, released without a script (see LONE).
 */

/** A Redis Cluster's scripts (every key declared) or any other's (see SEMAPHORE_KEYS). */
type Layout = 'declared' | 'derived';

/**
 * What the `:queued` mark holds (see queued_mark): off a Cluster, the settings the waiters'
 * calls were made with, which a renewal that frees a holder's permits hands them on with (see
 * SEMAPHORE_HAND_ON); on a Cluster `1`: a renewal there declares the permit key alone, and during
 * a slot migration it may see part of the queue only, so it hands nothing on itself, and tells
 * its client to (HAND_ON in `lock-lua.ts`), which sends SEMAPHORE_LEAVE with every key declared.
 */
const MARK = {
  declared: `local settings_marked = false`,
  derived: `local settings_marked = true`,
} as const;

/**
 * How a script names its keys: all declared (Cluster), or the permit alone and the rest derived.
 * `fast`: the names the fast paths use; `rest`: the queue's, named after them, so that a call
 * the fast path answers builds no other name.
 */
const SEMAPHORE_KEYS = {
  declared: {
    fast: `local permit, fence, holders, due = KEYS[1], KEYS[2], KEYS[6], KEYS[7]
`,
    rest: `local queue, waiters, channel = KEYS[3], KEYS[4], KEYS[5]
local base = string.sub(holders, 1, #holders - ${SEMAPHORE_SUFFIXES.holders.length})
`,
  },
  derived: {
    fast: `local permit = KEYS[1]
local base = string.sub(permit, 1, #permit - #ARGV[1] - ${SEMAPHORE_SUFFIXES.permit.length})
local fence, holders, due = base .. '${LOCK_KEY_SUFFIXES.fence}', base .. '${SEMAPHORE_SUFFIXES.holders}', base .. '${SEMAPHORE_SUFFIXES.due}'
`,
    rest: `local queue, waiters, channel = base .. '${SEMAPHORE_SUFFIXES.queue}', base .. '${SEMAPHORE_SUFFIXES.waiters}', base .. '${SEMAPHORE_SUFFIXES.released}'
`,
  },
} as const;

/**
 * The waiters set's name where the fast paths need it: only when they would create the holders
 * hash, whose `:queued` mark (and `:due` mark, beside the due set) a deletion from outside may
 * have taken while waiters are queued.
 */
const WAITERS_NAME = {
  declared: 'KEYS[4]',
  derived: `base .. '${SEMAPHORE_SUFFIXES.waiters}'`,
} as const;

/** The queue list's name where a fast part needs it (a release's look at it before its first write). */
const QUEUE_NAME = {
  declared: 'KEYS[3]',
  derived: `base .. '${SEMAPHORE_SUFFIXES.queue}'`,
} as const;

/**
 * A semaphore's first holder, while nobody else holds or waits, is kept alone (the derived
 * layout only, see below): the holders hash has one field, `!<token>` = `<permits>:<limit>:<fencing
 * token>`, and the hash's expiry is the holder's lease; there is no permit key and no meta field.
 * The field is the holder's permit: renewing the permit key of a holder that has none renews the
 * hash when it holds the token's field (see `renew_alone` in `lock-lua.ts`), and a crashed holder
 * alone is freed on Redis' clock with the hash. Its release is one plain `HDEL` of its field (no
 * script): 1 proves the holder still held it, and the hash, left empty, is gone with it; 0 sends
 * the caller to the release script (another caller changed the layout, or the lease ran out).
 *
 * Every script that meets a hash without `:limit` (each write of the full layout stores it) turns
 * a lone holder into the full layout first (`unfold_lone`): its entry, `:used`, `:limit`, counted
 * as unscored, and its permit key with the lease it had left; its `!` field goes, so that its
 * plain `HDEL` answers 0 from then on. So every count sees it, and nothing is let in beside it over
 * the limit. Not on a Cluster (the declared layout, which never writes the lone form): a renewal
 * there declares the permit key alone, and during a slot migration a call whose declared key is
 * missing goes to the importing node, which would not have the hash yet.
 */
const LONE = (layout: Layout) =>
  layout === 'declared'
    ? `
local function unfold_lone() return false end
`
    : `
local function unfold_lone()
  local fields = redis.call('HGETALL', holders)
  if #fields ~= 2 or string.byte(fields[1], 1) ~= 33 then return false end
  local token = string.sub(fields[1], 2)
  local permits, lim, fencing = string.match(fields[2], '^(%d+):(%d+):(%d+)$')
  if not permits then return false end
  local left = redis.call('PTTL', holders)
  -- The entry first, then the field's removal: the hash (and its expiry) never goes empty.
  redis.call('HSET', holders, token, permits .. ':' .. fencing, ':used', permits, ':limit', lim, ':unscored', 1)
  redis.call('HDEL', holders, fields[1])
  local own = base .. '${SEMAPHORE_SUFFIXES.permit}' .. token
  -- Our lone hashes always expire; one that does not (nothing of ours writes it) gives none. In
  -- its last millisecond a key's PTTL is 0, and the permit then gets that millisecond.
  if left >= 0 then redis.call('SET', own, token, 'PX', math.max(left, 1)) else redis.call('SET', own, token) end
  return true
end
`;

/** The fields of the holders hash every full part starts from, in the order `LIB` reads them. */
const COUNTS = `redis.call('HMGET', holders, ':used', ':unscored', ':limit', ':queued', ':due')`;
/** The same, and the caller's entry last: what the fast parts read (see LIB). */
const COUNTS_AND_ENTRY = `redis.call('HMGET', holders, ':used', ':unscored', ':limit', ':queued', ':due', ARGV[1])`;

/**
 * What the full parts share. `counts`: `read` to read the holders hash's fields (unfolding a
 * holder alone first), or the name of the fast part's `HMGET` of the same fields and the
 * caller's entry (COUNTS_AND_ENTRY), after its own unfolding: nothing written between changes
 * them, so a call the fast part passes on reads them once.
 */
const LIB = (counts: 'read' | 'state') => `${QUEUE_MEMBERS}

local function permit_key(token) return base .. '${SEMAPHORE_SUFFIXES.permit}' .. token end

-- The ':queued' mark's value (see keep_limit): off a Cluster '<fence retention>:<waiter lease>',
-- what a renewal needs to hand freed permits on (see SEMAPHORE_HAND_ON), else 1. The settings of
-- the call that sets it (kept until it is dropped), not of the waiters it is handed to: no grant
-- uses a waiter's own (a release's uses the releaser's). Every instance sends the same waiter
-- lease, and only applications configured with another fenceRetention differ (docs/redis-data.md).
local function queued_mark()
  if settings_marked then return fence_retention .. ':' .. lease end
  return 1
end

-- The permits held in all, as the holders hash counts them (kept up to date by every change
-- below), how many holders the fast path let in without a score (see score_unscored), the
-- limit stored (false when none), whether the queue may have waiters (see keep_limit), and
-- whether the due set may exist (see add_due).
${counts === 'read' ? `local counts = ${COUNTS}
if not counts[3] and unfold_lone() then counts = ${COUNTS} end` : `local counts = ${counts}`}
local used, unscored, stored_limit, queued, due_marked = tonumber(counts[1] or '0'), tonumber(counts[2] or '0'), counts[3], counts[4], counts[5]
-- The caller's entry as the fast part read it (false: none; nil: not read), kept true by the
-- changes below that may drop it before the scripts use it (purge, forget_if_idle).
local caller_entry = counts[6]
-- Whether ':used' differs from used: a dropped holder's permits are written with the next write
-- of ':used' (a grant's HSET writes it anyway), or by flush_used before the script answers.
local used_dirty = false
local function flush_used()
  if used_dirty then
    redis.call('HSET', holders, ':used', used)
    used_dirty = false
  end
end

-- The due set's first member and its score ({} when the set is gone), read once and kept until a
-- change below writes the set: it tells whether the set exists (score_unscored), whether any
-- deadline has passed (purge), and the soonest one (an acquire's answer).
local due_first
local function first_due()
  if not due_first then due_first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES') end
  return due_first
end

-- Scores holders in the due set, which may create it: the hash's ':due' mark says it may exist,
-- so that the release of the last holder deletes the due set only when the mark is there. The
-- due set never outlives the hash (each guard pushes both on, the hash first), and is only
-- deleted with it, so a hash without the mark has no due set beside it.
local function add_due(...)
  redis.call('ZADD', due, ...)
  due_first = nil
  if not due_marked then
    redis.call('HSET', holders, ':due', 1)
    due_marked = '1'
  end
end

-- Keeps the holders hash and the due set for at least ms: they guard every permit and expire with
-- the longest one (the hash, which keeps the limit, with the waiters' lease too), so that
-- holders that all crashed leave nothing. Either may have just been created (no expiry yet).
local function guard_key(key, ms)
  local left = redis.call('PTTL', key)
  if left == -1 or (left >= 0 and left < tonumber(ms)) then redis.call('PEXPIRE', key, ms) end
end
local function guard(ms)
  guard_key(holders, ms)
  guard_key(due, ms)
end

-- Looks at the holders whose known deadline has passed: a holder whose permit is gone (crashed,
-- or its lease ran out) is dropped and its permits freed; one renewed meanwhile gets its new
-- deadline. Nothing is read of the others.
local function purge(now)
  local first = first_due()
  if #first == 0 or tonumber(first[2]) > now then return end
  local overdue = redis.call('ZRANGEBYSCORE', due, '-inf', now)
  due_first = nil
  local freed = 0
  for _, token in ipairs(overdue) do
    local left = redis.call('PTTL', permit_key(token))
    if left == -2 then
      local held = redis.call('HGET', holders, token)
      if held then
        freed = freed + tonumber(string.match(held, '^(%d+)'))
        redis.call('HDEL', holders, token)
        if token == ARGV[1] then caller_entry = false end
      end
      redis.call('ZREM', due, token)
    else
      -- A permit without expiry (nothing of ours writes one) is looked at again a minute later.
      redis.call('ZADD', due, now + (left >= 0 and left or 60000), token)
    end
  end
  if freed > 0 then
    used = math.max(0, used - freed)
    redis.call('HSET', holders, ':used', used)
    used_dirty = false
  end
end

-- Drops a holder (its permit key is the caller's business): its entry, its permits (written to
-- ':used' later, see used_dirty), its deadline. held: its entry (false: none) when read already.
local function drop_holder(token, held)
  if held == nil then held = redis.call('HGET', holders, token) end
  if not held then return end
  used = math.max(0, used - tonumber(string.match(held, '^(%d+)')))
  redis.call('HDEL', holders, token)
  used_dirty = true
  redis.call('ZREM', due, token)
  due_first = nil
end

-- The first live waiter, dropping the dead ones before it; and whether the queue or the waiters
-- set existed at its first look (what forget_if_idle's EXISTS would answer there). A lapsed
-- waiter loses its place when it would be served: one whose permits are not free under lim,
-- and that lapsed less than grace (the waiter lease) ago, keeps it, as at a busy mutex, and is
-- the head (nobody behind it may pass it); one lapsed longer is taken for dead, so that it holds
-- smaller requests up that long at most.
local function live_head(now, lim, grace)
  local seen
  while true do
    local head = redis.call('LINDEX', queue, 0)
    if not head and restore_list(queue, waiters) then head = redis.call('LINDEX', queue, 0) end
    if seen == nil then seen = head ~= false end
    if not head then return nil, seen end
    local alive_until = tonumber(redis.call('ZSCORE', waiters, head))
    if alive_until and alive_until >= now then return head, seen end
    if alive_until and alive_until + grace >= now and tonumber(string.match(head, ':([1-9]%d*)$') or '0') > lim - used then
      return head, seen
    end
    redis.call('LPOP', queue)
    redis.call('ZREM', waiters, head)
  end
end

-- Gives token its permits for lease ms, under the limit lim. Returns its fencing token.
local function take(token, permits, lease, now, lim)
  redis.call('SET', permit_key(token), token, 'PX', lease)
  local fencing = next_fence(fence)
  used = used + tonumber(permits)
  if not stored_limit and not queued and redis.call('EXISTS', waiters) == 1 then
    -- A hash created anew while waiters are queued (it was deleted from outside, its mark with
    -- it): marked again, or a waiter's next call would be let in by a fast path with its place
    -- still queued, and that place granted once the waiter had gone (a permit for nobody).
    queued = queued_mark()
    redis.call('HSET', holders, token, permits .. ':' .. fencing, ':used', used, ':limit', lim, ':queued', queued)
  else
    redis.call('HSET', holders, token, permits .. ':' .. fencing, ':used', used, ':limit', lim)
  end
  used_dirty = false
  stored_limit = tostring(lim)
  add_due(now + tonumber(lease), token)
  guard(lease)
  return fencing
end

-- Keeps the call's limit (unless stored: then it is the same) for at least ms, for the waiters,
-- and marks the queue as possibly holding some (':queued'), which sends the fast paths to the
-- full ones. Every waiter joins or refreshes its place through here, and the hash then outlives
-- the queue keys (twice its liveness lease, see join_queue), so that while anyone may be waiting the mark is there; a mark left after
-- the waiters went (granted, gone, expired) costs one full call, which drops it (forget_if_idle).
local function keep_limit(lim, ms)
  if not stored_limit then
    queued = queued_mark()
    redis.call('HSET', holders, ':limit', lim, ':used', used, ':queued', queued)
    used_dirty = false
    stored_limit = tostring(lim)
  elseif not queued then
    queued = queued_mark()
    redis.call('HSET', holders, ':queued', queued)
  end
  guard(ms)
end

-- The fast path lets holders in without scoring them (no TIME, no due set: see ACQUIRE_FAST), and
-- counts them in ':unscored'. Before a count they all enter the due set as due now, so that the
-- purge looks at each once (one PTTL) and scores it; the holders scored already keep their score.
-- A due set lost on its own (evicted: a key goes whole) is rebuilt the same way.
local function score_unscored()
  if used <= 0 or (unscored <= 0 and #first_due() > 0) then return end
  local members = {}
  for _, token in ipairs(redis.call('HKEYS', holders)) do
    if string.byte(token, 1) ~= 58 then
      members[#members + 1] = 0
      members[#members + 1] = token
    end
    if #members >= 1000 then
      add_due('NX', unpack(members))
      members = {}
    end
  end
  if #members > 0 then add_due('NX', unpack(members)) end
  unscored = 0
  redis.call('HSET', holders, ':unscored', 0)
  -- PTTL is 0 in the hash's last millisecond: the due set gets that millisecond, not no expiry.
  local left = redis.call('PTTL', holders)
  if left >= 0 then guard_key(due, math.max(left, 1)) end
end

-- Hands free permits to the waiters at the head of the queue, in order, as long as the next
-- one fits (FIFO: a large request is never overtaken). Each gets its permit for at most
-- grant_ms (it renews to its ttl on waking) and a "<token>:<fencing token>" message. head: the
-- live head when the caller has just read it. Answers the grants, and whether the queue and the
-- waiters set are gone (its last look found neither), which forget_if_idle then need not read.
-- Whether the caller is releasing its permits (the release script): its token at the head is a
-- place it left behind (see grant_fitting), not a waiter.
local releasing = false
local function grant_fitting(lim, grant_ms, sharded, now, head)
  local granted = {}
  while true do
    -- Nothing fits once every permit is held, and whether the head is alive no longer matters:
    -- a queue with anyone in it is not idle (dead waiters at its head go at the next look).
    if used >= lim then
      if head or redis.call('LINDEX', queue, 0) then return granted, false end
      return granted, nil
    end
    head = head or live_head(now, lim, grant_ms)
    if not head then return granted, true end
    -- A ttl or permits of 0 (nothing of ours writes one) would make SET fail halfway.
    local token, ttl, permits = string.match(head, '^(.+):([1-9]%d*):([1-9]%d*)$')
    if token and ((releasing and token == ARGV[1]) or redis.call('HEXISTS', holders, token) == 1) then
      -- It holds already (or is releasing): its own call let it in by a path that reads no queue
      -- key (the hash, deleted from outside, took the ':queued' mark with it, see keep_limit), and
      -- left its place. Granted again, its permits would be counted twice under one entry, one
      -- count never freed (or a releaser would get a permit it no longer waits for): its place
      -- goes (whether its permits fit or not: it holds up nobody behind it), and nothing else.
      redis.call('LPOP', queue)
      redis.call('ZREM', waiters, head)
    elseif token and tonumber(permits) > lim - used then
      return granted, false
    elseif token then
      -- The permit first, then the queue: a call that failed halfway must not drop the waiter.
      local fencing = take(token, permits, math.min(tonumber(ttl), grant_ms), now, lim)
      redis.call('LPOP', queue)
      redis.call('ZREM', waiters, head)
      redis.call(sharded == '1' and 'SPUBLISH' or 'PUBLISH', channel, token .. ':' .. fencing)
      granted[#granted + 1] = token
      granted[#granted + 1] = fencing
    else
      redis.call('LPOP', queue)
      redis.call('ZREM', waiters, head)
    end
    head = nil
  end
end

-- The limit permits are counted against: the stored one while the semaphore is in use (a
-- caller refused for giving another limit still leaves through these scripts), else the call's.
local function limit_in_use(given)
  return tonumber(stored_limit or given)
end

-- The limit is kept while the semaphore has holders or waiters, and forgotten with them; the
-- ':queued' mark goes with the last waiter. idle: whether both queue keys are gone, when the
-- script has just seen it (see live_head and grant_fitting).
local function forget_if_idle(idle)
  if not (used <= 0 or queued) then return end
  if idle == nil then idle = redis.call('EXISTS', queue, waiters) == 0 end
  if idle then
    if used <= 0 then
      redis.call('DEL', holders, due)
      stored_limit, due_marked, used_dirty, caller_entry, due_first = false, false, false, false, nil
    else
      redis.call('HDEL', holders, ':queued')
    end
    queued = false
  end
end
`;

/**
 * ARGV: owner token, ttl, `<fence retention>:<waiter lease>:<sharded>:<enqueue>:<limit>:<permits>`.
 * Returns `{1, fencing}` (acquired, or already granted: the lease restarts at ttl),
 * `{0, pttl, fence}` (queued or refreshed when enqueue is 1; pttl is a lower bound of the
 * shortest holder lease left, -1 without holders; fence the fencing counter, see the lock's
 * ACQUIRE) or `{2, limit}` when the semaphore is in use with another limit.
 *
 * The fast path comes first: when the holders hash (one `HMGET`) shows nobody waiting (no
 * `:queued` mark, see keep_limit) and room under the same limit, and `SET NX` creates the
 * caller's permit (a caller with an entry, granted already, goes on below), the caller takes its
 * permits with `HMGET`, `SET NX PX`, `INCR`, one `HSET` and the hash's expiry (`PEXPIRE` when
 * the hash is new, else `PEXPIRE GT` on Redis 7): no `TIME` (but for a new fencing counter, see
 * NEXT_FENCING), no queue key read, and no score in
 * the due set (it is counted as unscored, and scored by the next count that needs it). A count
 * that includes crashed holders only ever refuses here (the slow path then drops them), never
 * admits one too many.
 */
const ACQUIRE_PARSE = `
local fence_retention, lease, sharded, enqueue, limit_arg, permits_arg = string.match(ARGV[3], '^(%d+):(%d+):(%d):(%d):(%d+):(%d+)$')
local limit, permits = tonumber(limit_arg), tonumber(permits_arg)
`;

/**
 * A holder alone (see LONE): nothing under the holders name, so nobody holds or waits (a waiter
 * keeps the hash for its liveness lease), nor under the waiters set's or the due set's (one
 * `EXISTS` of the three, which counts them: either without the hash, it was deleted from outside,
 * see ACQUIRE_FAST): `INCR` of the fencing counter, `HSET` of the
 * field, `PEXPIRE` of the hash with the lease. Answers the fencing token alone, an integer: a
 * reply Redis writes with one `write`, where an array takes a `writev` (and the client parses an
 * array), a few microseconds each side on the pair `npm run bench` measures.
 */
const ACQUIRE_LONE = `
-- Waiters or a due set without a hash: it was deleted from outside, its marks with it (see ACQUIRE_FAST).
if permits <= limit and redis.call('EXISTS', holders, ${WAITERS_NAME.derived}, due) == 0 then
  ${nextFencingUndoing('')}
  if fence_retention ~= '0' then redis.call('PEXPIRE', fence, fence_retention) end
  -- The arguments as sent: a Lua number spelled out costs Redis a printf of a double.
  redis.call('HSET', holders, '!' .. ARGV[1], permits_arg .. ':' .. limit_arg .. ':' .. fencing)
  redis.call('PEXPIRE', holders, ARGV[2])
  return fencing
end
`;

const ACQUIRE_FAST = (layout: Layout) => `
local state = ${COUNTS_AND_ENTRY}
if not state[3] and unfold_lone() then state = ${COUNTS_AND_ENTRY} end
local held = tonumber(state[1] or '0')
-- A caller with an entry (granted by a release) goes on below, whether its permit is there or has
-- lapsed: counted here again, its permits would be counted twice, and the first ones never freed.
-- A new hash (no limit) with waiters queued was deleted from outside, its ':queued' mark with it:
-- the full path takes the caller's own place if it has one, and marks the new hash (see take).
-- With a due set beside it, its ':due' mark went too: the full path deletes that set (the
-- semaphore is idle: forget_if_idle), else the last release would leave it (see add_due).
if not state[4] and not state[6] and (not state[3] or tonumber(state[3]) == limit) and held + permits <= limit
  and (state[3] or redis.call('EXISTS', ${WAITERS_NAME[layout]}, due) == 0)
  and redis.call('SET', permit, ARGV[1], 'NX', 'PX', ARGV[2]) then
  ${nextFencingUndoing("redis.call('DEL', permit)")}
  if fence_retention ~= '0' then redis.call('PEXPIRE', fence, fence_retention) end
  local entry, unscored = permits_arg .. ':' .. fencing, tonumber(state[2] or '0') + 1
  if not state[3] then
    -- A hash without a limit is new (every write of a holder or waiter stores the limit).
    redis.call('HSET', holders, ARGV[1], entry, ':used', held + permits, ':limit', limit_arg, ':unscored', unscored)
    redis.call('PEXPIRE', holders, ARGV[2])
  else
    redis.call('HSET', holders, ARGV[1], entry, ':used', held + permits, ':unscored', unscored)
    if (tonumber(redis.REDIS_VERSION_NUM) or 0) >= 0x070000 then
      redis.call('PEXPIRE', holders, ARGV[2], 'GT')
    else
      local left = redis.call('PTTL', holders)
      if left == -1 or (left >= 0 and left < tonumber(ARGV[2])) then redis.call('PEXPIRE', holders, ARGV[2]) end
    end
  end
  return {1, fencing}
end
`;

const ACQUIRE_FULL = `
${CHECK_FENCING}
${QUEUE_READABLE('queue', 'waiters')}
lease = tonumber(lease)
${LIB('state')}
local now = now_ms()
score_unscored()
purge(now)
-- Without holders an idle queue makes the semaphore forget its limit, which decides below. With
-- holders it only drops a stale ':queued' mark, read by nothing before the queue's first look
-- (live_head), which tells the same as EXISTS: the answers given before it look themselves.
local idle_unknown = used > 0 and queued
if not idle_unknown then forget_if_idle() end
-- A call that answers without taking permits (another limit, granted already) first hands what is
-- free under lim (permits the count above freed, a crashed holder's) to the waiters that fit, as a
-- release does: left, they would wait for their next poll. Answers forget_if_idle's idle.
local function hand_on(lim)
  if not queued or used >= lim then return nil end
  local _, idle = grant_fitting(lim, lease, sharded, now)
  return idle
end
if stored_limit and tonumber(stored_limit) ~= limit then
  local idle = hand_on(tonumber(stored_limit))
  if idle_unknown then forget_if_idle(idle) end
  return {2, tonumber(stored_limit)}
end
-- Granted already (by a release, or by this very call's grants below): the lease restarts at ttl.
-- A grant whose permit is gone (its lease ran out before a count dropped it, or it was evicted)
-- has lapsed: the entry goes, its permits are free, and the caller asks as anyone would.
-- held: the caller's entry (false: none) when known.
local function mine(held)
  if held == nil then held = redis.call('HGET', holders, ARGV[1]) end
  if not held then return end
  if redis.call('PEXPIRE', permit, ARGV[2]) == 0 then
    drop_holder(ARGV[1], held)
    flush_used()
    caller_entry = false
    return
  end
  add_due(now + tonumber(ARGV[2]), ARGV[1])
  guard(ARGV[2])
  return {1, tonumber(string.match(held, ':(%d+)$'))}
end
local granted = mine(caller_entry)
if granted then
  local idle = hand_on(limit)
  if idle_unknown then forget_if_idle(idle) end
  return granted
end
local member = ARGV[1] .. ':' .. ARGV[2] .. ':' .. permits
-- A full semaphore admits nobody: the caller joins without a look at the queue (restore_list
-- then checks the list, and dead waiters at the head are dropped by the next release).
local head, seen, looked
if used < limit then
  head, seen = live_head(now, limit, lease)
  looked = true
  if idle_unknown and not seen then forget_if_idle(true) end
end
if (not head or head == member) and limit - used >= permits then
  if head then
    redis.call('LPOP', queue)
    redis.call('ZREM', waiters, member)
  end
  local fencing = take(ARGV[1], permits, ARGV[2], now, limit)
  -- Those queued behind may fit in what is left.
  local _, idle = grant_fitting(limit, lease, sharded, now)
  -- The caller may have been the last waiter: without the mark, the next calls take the fast path.
  forget_if_idle(idle)
  return {1, fencing}
end
if head and head ~= member then
  -- Others are owed free permits first (from the head just read); the grants may reach this
  -- caller too, and then it holds: re-queued, it would be granted a second time (a permit
  -- counted once, held twice).
  local given, idle = grant_fitting(limit, lease, sharded, now, head)
  for i = 1, #given, 2 do
    if given[i] == ARGV[1] then return mine() end
  end
  -- Everyone ahead was served and the queue is empty: the caller fits in what is left.
  if idle and limit - used >= permits then
    local fencing = take(ARGV[1], permits, ARGV[2], now, limit)
    forget_if_idle(true)
    return {1, fencing}
  end
end
local joined = 0
if enqueue == '1' then
  -- When the queue was just looked at (live_head, grant_fitting), restore_list has nothing to do.
  joined = join_queue(queue, waiters, member, now, lease, looked)
  keep_limit(limit, 2 * lease)
end
local first = first_due()
local soonest = #first == 0 and -1 or math.max(0, tonumber(first[2]) - now)
-- The fencing counter too: a grant to this caller up to it expired before this call (see the lock's ACQUIRE).
return {0, soonest, tonumber(redis.call('GET', fence) or '0'), joined}
`;

/**
 * ARGV: owner token, `<fence retention>:<waiter lease>:<sharded>:<limit>` (the limit used only
 * when none is stored). Returns `{0}` when the permit is not ours (anymore), else
 * `{1, token, fencing, token, fencing...}` for the waiters it went to.
 *
 * The permit's name holds its owner's token and nothing else ever writes it, so a `DEL` that
 * deletes it proves the caller held it. With nobody waiting (no `:queued` mark) that is `HMGET`
 * and, for the last holder with no due set (no `:due` mark), one `DEL` of the permit and the
 * hash; else `DEL` of the permit and the holder's removal (`DEL` of the hash and the due set
 * when it was the last one, else `HDEL`, `HSET`, and `ZREM` when marked): no `TIME`, nothing counted.
 */
const RELEASE_FAST = (layout: Layout) => `
-- The full part's fields too (see LIB), and the caller's entry last.
local state = ${COUNTS_AND_ENTRY}
-- Waiters queued may be granted permits under the next token (the full part): the counter is
-- looked at before any write (a lone holder has none queued).
if state[4] then
  ${CHECK_FENCING}
  ${QUEUE_READABLE(QUEUE_NAME[layout], WAITERS_NAME[layout])}
end
-- The due set is written below (ZREM, or the full part's count) after the permit's DEL: a key of
-- another type there must refuse the call before any write (WRONGTYPE, nothing changed).
if state[4] or state[5] then redis.call('ZSCORE', due, '') end
-- What the reply says first: 0 when the caller's permit was gone (the full part may still hand
-- the permits its entry counted to waiters).
local held = 1
-- A lone holder (the caller, whose plain HDEL did not reach Redis, or another once the caller's
-- lease ran out) is unfolded first: DEL of the hash below would delete another's permit.
if not state[1] and unfold_lone() then state = ${COUNTS_AND_ENTRY} end
-- No hash (deleted from outside, or gone with a lone holder's lease): a due set beside it was left
-- by a deletion from outside (it never outlives the hash otherwise), and no call would delete it.
if not state[1] then redis.pcall('DEL', due) end
local left = tonumber(state[1] or '0') - tonumber(string.match(state[6] or '0', '^(%d+)'))
-- pcall: on a replica the write fails, and the answer is the same as a replica's for the mutex.
local deleted
if not state[4] and not state[5] and left <= 0 then
  -- The last holder, nobody waiting, no due set: the permit and the hash go in one DEL, whose
  -- count says whether the permit was there (the hash was when it has ':used'). Were it not,
  -- the hash held only this caller's lapsed entry, which the next count would drop as well.
  deleted = redis.pcall('DEL', permit, holders)
  if deleted == (state[1] and 2 or 1) then return {1} end
  -- One short: the permit had lapsed, and the hash held only its entry. Not the caller's any more.
  if type(deleted) == 'number' then deleted = 0 end
else
  deleted = redis.pcall('DEL', permit)
end
if deleted ~= 1 then
  if string.find(redis.call('INFO', 'replication'), 'role:slave', 1, true) then
    return redis.error_reply('READONLY this node is a replica: lock ownership cannot be checked here')
  end
  if type(deleted) == 'table' then return deleted end
  -- The caller's permit is gone (its lease ran out, or it was deleted or evicted) and its
  -- entry still counted: it goes now, as the next count would drop it (see mine), for a count
  -- may not come before the hash expires (the last call was this one), and every acquisition
  -- pushes that on. Waiters queued get the permits now (the full part), as from a release, rather
  -- than at their next poll.
  if state[6] and state[4] then
    held = 0
  else
    if state[6] then
      if left <= 0 then
        redis.call('DEL', holders, due)
      else
        redis.call('HDEL', holders, ARGV[1])
        redis.call('HSET', holders, ':used', left)
        if state[5] then redis.call('ZREM', due, ARGV[1]) end
      end
    end
    return {0}
  end
end
if not state[4] then
  if left <= 0 then
    redis.call('DEL', holders, due)
  elseif state[6] then
    redis.call('HDEL', holders, ARGV[1])
    redis.call('HSET', holders, ':used', left)
    if state[5] then redis.call('ZREM', due, ARGV[1]) end
  end
  return {1}
end
`;

const RELEASE_FULL = `
local fence_retention, lease, sharded, limit = string.match(ARGV[2], '^(%d+):(%d+):(%d):(%d+)$')
${LIB('state')}
releasing = true
drop_holder(ARGV[1], caller_entry)
local now = now_ms()
score_unscored()
purge(now)
local granted, idle = grant_fitting(limit_in_use(limit), tonumber(lease), sharded, now)
forget_if_idle(idle)
flush_used()
table.insert(granted, 1, held)
return granted
`;

/**
 * A waiter gives up. ARGV: its token, its ttl, `<fence retention>:<waiter lease>:<sharded>:<limit>:<permits>`.
 * A permit granted to it meanwhile goes back, and free permits to the next waiters. Also sent,
 * with limit and permits 0, for a holder whose renewal dropped its entry but could not hand the
 * permits that freed to the waiters (HAND_ON in `lock-lua.ts`): neither queued nor holding any
 * more, it removes nothing of its own, and the count hands those permits on as a release would.
 */
const LEAVE = `
${CHECK_FENCING}
${QUEUE_READABLE('queue', 'waiters', { zset: 'due' })}
redis.call('GET', permit)
local fence_retention, lease, sharded, limit, permits = string.match(ARGV[3], '^(%d+):(%d+):(%d):(%d+):(%d+)$')
${LIB('read')}
local member = ARGV[1] .. ':' .. ARGV[2] .. ':' .. permits
redis.call('LREM', queue, 1, member)
redis.call('ZREM', waiters, member)
if redis.call('GET', permit) == ARGV[1] then redis.call('DEL', permit) end
drop_holder(ARGV[1])
local now = now_ms()
score_unscored()
purge(now)
local _, idle = grant_fitting(limit_in_use(limit), tonumber(lease), sharded, now)
forget_if_idle(idle)
flush_used()
return 1
`;

/**
 * For the renew scripts every lock kind shares (`forget_permit` in `lock-lua.ts`):
 * `hand_on_freed(base, token, mark)`, called once a renewal that found holder `token`'s permit
 * gone dropped its entry from the semaphore `base`'s holders hash while `:queued` was set
 * (`mark`, its value). Hands the permits that freed to the waiters that fit, as a release does
 * (the full part of RELEASE after its `drop_holder`): left, they would wait for their next poll.
 * The renew scripts get a token and a ttl per lock, nothing of the queue: its settings come from
 * the mark (see queued_mark). A mark without them (a Cluster's, or one an earlier version wrote)
 * hands nothing on here and answers true: the permits are owed to the waiters, and the renewal
 * tells its client so (HAND_ON in `lock-lua.ts`), which hands them on with SEMAPHORE_LEAVE, every
 * key declared on a Cluster. Defined in a function of its own, so that a renewal that needs none
 * of it pays one closure: its names are derived from `base` as off a Cluster, and `ARGV` is the
 * lost holder's token (the scripts' caller, see `releasing`).
 */
export const SEMAPHORE_HAND_ON = `
local function hand_on_freed(base, token, mark)
  local fence_retention, lease = string.match(mark, '^(%d+):(%d+)$')
  if not fence_retention then return true end
  local sharded, settings_marked, ARGV = '0', true, { token }
  local fence, holders, due = base .. '${LOCK_KEY_SUFFIXES.fence}', base .. '${SEMAPHORE_SUFFIXES.holders}', base .. '${SEMAPHORE_SUFFIXES.due}'
  -- A grant's token would be refused halfway by a counter no token comes from, the count by a queue
  -- key or due set of another type: the client hands the permits on instead (SEMAPHORE_LEAVE,
  -- refused whole, with the key named).
  ${SEMAPHORE_KEYS.derived.rest}
  if not pcall(function()
    ${CHECK_FENCING}
    ${QUEUE_READABLE('queue', 'waiters', { zset: 'due' })}
  end) then return true end
  local function unfold_lone() return false end
  ${LIB('read')}
  releasing = true
  local now = now_ms()
  score_unscored()
  purge(now)
  local _, idle = grant_fitting(limit_in_use(0), tonumber(lease), sharded, now)
  forget_if_idle(idle)
  flush_used()
end
`;

/** A script's fast names, the lone holder's unfolding, its fast part, the queue's names and mark, then its full part. */
const compose = (fast: (layout: Layout) => string, full: string) => {
  const build = (layout: Layout) => SEMAPHORE_KEYS[layout].fast + LONE(layout) + fast(layout) + SEMAPHORE_KEYS[layout].rest + MARK[layout] + '\n' + full;
  return { declared: build('declared'), derived: build('derived') };
};

/** Each script with its keys declared (Cluster) or derived from the permit's (anywhere else). */
export const SEMAPHORE_ACQUIRE = compose((layout) => ACQUIRE_PARSE + (layout === 'derived' ? ACQUIRE_LONE : '') + ACQUIRE_FAST(layout), ACQUIRE_FULL);
export const SEMAPHORE_RELEASE = compose(RELEASE_FAST, RELEASE_FULL);
export const SEMAPHORE_LEAVE = compose(() => '', LEAVE);
