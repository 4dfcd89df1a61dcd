import { QUEUE_MEMBERS } from '../stores/redis/queue-lua.js';
/**
 * The counting semaphore's scripts. KEYS of every one: own permit, fence, queue, waiters,
 * release channel, holders, limit (see `semaphore-keys.ts`). All seven share the `{key}`
 * Cluster slot; the permits of other holders (`<holders without ':holders'>:permit:<token>`)
 * are in that slot too, so the scripts may read them although they are not declared.
 *
 * A permit is a plain key holding its owner token with the holder's lease as expiry, so a
 * crashed holder's permit disappears on Redis's clock, and renewals are the mutex's. The
 * holders hash only remembers who may hold what: an entry whose permit key is gone is dead
 * and dropped when counted. Queue members are `<token>:<ttl>:<permits>`, with the mutex's
 * liveness leases on the server clock (`TIME`).
 */
const LIB = `${QUEUE_MEMBERS}

local base = string.sub(KEYS[6], 1, #KEYS[6] - #':holders')
local function permit_key(token) return base .. ':permit:' .. token end

-- Permits not held by a live holder; drops holders whose permit expired. Also returns the
-- shortest lease left among holders (-1 when none), the waiters' hint of when to look again.
local function free_permits(limit)
  local used, soonest = 0, -1
  local entries = redis.call('HGETALL', KEYS[6])
  for i = 1, #entries, 2 do
    local left = redis.call('PTTL', permit_key(entries[i]))
    if left == -2 then
      redis.call('HDEL', KEYS[6], entries[i])
    else
      used = used + tonumber(string.match(entries[i + 1], '^(%d+)'))
      if soonest < 0 or (left >= 0 and left < soonest) then soonest = left end
    end
  end
  return limit - used, soonest
end

local function live_head(now)
  while true do
    local head = redis.call('LINDEX', KEYS[3], 0)
    if not head then
      restore_list(KEYS[3], KEYS[4])
      head = redis.call('LINDEX', KEYS[3], 0)
      if not head then return nil end
    end
    local alive_until = redis.call('ZSCORE', KEYS[4], head)
    if alive_until and tonumber(alive_until) >= now then return head end
    redis.call('LPOP', KEYS[3])
    redis.call('ZREM', KEYS[4], head)
  end
end

-- The holders hash and the limit guard every permit: they expire with the longest one (and the
-- limit with the waiters' lease too), so that holders that all crashed leave nothing.
local function take(token, permits, lease)
  redis.call('SET', permit_key(token), token, 'PX', lease)
  local fencing = next_fence(KEYS[2])
  hset_guard(KEYS[6], token, permits .. ':' .. fencing, lease)
  outlive(KEYS[7], lease)
  return fencing
end

-- Stores the call's limit (unless stored: then it is the same), kept for at least ms.
local function keep_limit(ms)
  if redis.call('EXISTS', KEYS[7]) == 1 then
    outlive(KEYS[7], ms)
  else
    redis.call('SET', KEYS[7], ARGV[4], 'PX', ms)
  end
end

-- Hands free permits to the waiters at the head of the queue, in order, as long as the next
-- one fits (FIFO: a large request is never overtaken). Each gets its permit for at most
-- grant_ms (it renews to its ttl on waking) and a "<token>:<fencing token>" message.
local function grant_fitting(free, grant_ms, sharded)
  local granted = {}
  local now = now_ms()
  while true do
    local head = live_head(now)
    if not head then break end
    -- A ttl or permits of 0 (nothing of ours writes one) would make SET fail halfway.
    local token, ttl, permits = string.match(head, '^(.+):([1-9]%d*):([1-9]%d*)$')
    if token and tonumber(permits) > free then break end
    if token then
      -- The permit first, then the queue: a call that failed halfway must not drop the waiter.
      free = free - tonumber(permits)
      local fencing = take(token, permits, math.min(tonumber(ttl), grant_ms))
      redis.call('LPOP', KEYS[3])
      redis.call('ZREM', KEYS[4], head)
      redis.call(sharded == '1' and 'SPUBLISH' or 'PUBLISH', KEYS[5], token .. ':' .. fencing)
      granted[#granted + 1] = token
      granted[#granted + 1] = fencing
    else
      redis.call('LPOP', KEYS[3])
      redis.call('ZREM', KEYS[4], head)
    end
  end
  return granted
end

-- The limit permits are counted against: the stored one while the semaphore is in use (a
-- caller refused for giving another limit still leaves through these scripts), else the call's.
local function limit_in_use(given)
  return tonumber(redis.call('GET', KEYS[7]) or given)
end

-- The limit is kept while the semaphore has holders or waiters, and forgotten with them.
local function forget_limit_if_idle()
  if redis.call('EXISTS', KEYS[6], KEYS[3], KEYS[4]) == 0 then redis.call('DEL', KEYS[7]) end
end
`;

/**
 * ARGV: owner token, ttl, settings `<fence retention>:<waiter lease>:<sharded>:<enqueue>`,
 * limit, permits. Returns `{1, fencing}` (acquired, or already granted: the lease restarts at
 * ttl), `{0, pttl}` (queued or refreshed when enqueue is 1; pttl is the shortest holder lease
 * left) or `{2, limit}` when the semaphore is in use with another limit.
 */
export const SEMAPHORE_ACQUIRE = `
local fence_retention, lease, sharded, enqueue = string.match(ARGV[3], '^(%d+):(%d+):(%d):(%d)$')
lease = tonumber(lease)
local limit, permits = tonumber(ARGV[4]), tonumber(ARGV[5])
${LIB}
local free, soonest = free_permits(limit)
forget_limit_if_idle()
local known = redis.call('GET', KEYS[7])
if known and tonumber(known) ~= limit then return {2, tonumber(known)} end
-- Granted already (by a release, or by this very call's grants below): the lease restarts at ttl.
local function mine()
  local held = redis.call('HGET', KEYS[6], ARGV[1])
  if held then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    outlive(KEYS[6], ARGV[2])
    outlive(KEYS[7], ARGV[2])
    return {1, tonumber(string.match(held, ':(%d+)$'))}
  end
end
local granted = mine()
if granted then return granted end
local member = ARGV[1] .. ':' .. ARGV[2] .. ':' .. ARGV[5]
local head = live_head(now_ms())
if (not head or head == member) and free >= permits then
  if head then
    redis.call('LPOP', KEYS[3])
    redis.call('ZREM', KEYS[4], member)
  end
  keep_limit(ARGV[2])
  local fencing = take(ARGV[1], ARGV[5], ARGV[2])
  -- Those queued behind may fit in what is left.
  grant_fitting(free - permits, lease, sharded)
  return {1, fencing}
end
if head and head ~= member then
  -- Others are owed free permits first; the grants may reach this caller too, and then it
  -- holds: re-queued, it would be granted a second time (a permit counted once, held twice).
  grant_fitting(free, lease, sharded)
  granted = mine()
  if granted then return granted end
end
if enqueue == '1' then
  join_queue(KEYS[3], KEYS[4], member, now_ms(), lease)
  keep_limit(lease)
end
-- The fencing counter too: a grant to this caller up to it expired before this call (see the lock's ACQUIRE).
return {0, soonest, tonumber(redis.call('GET', KEYS[2]) or '0')}
`;

/**
 * ARGV: owner token, settings `<fence retention>:<waiter lease>:<sharded>`, limit (used only
 * when none is stored). Returns
 * `{0}` when the permit is not ours (anymore), else `{1, token, fencing, token, fencing...}`
 * for the waiters it went to.
 */
export const SEMAPHORE_RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  if string.find(redis.call('INFO', 'replication'), 'role:slave', 1, true) then
    return redis.error_reply('READONLY this node is a replica: lock ownership cannot be checked here')
  end
  return {0}
end
local fence_retention, lease, sharded = string.match(ARGV[2], '^(%d+):(%d+):(%d)$')
${LIB}
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[6], ARGV[1])
local granted = grant_fitting((free_permits(limit_in_use(ARGV[3]))), tonumber(lease), sharded)
forget_limit_if_idle()
table.insert(granted, 1, 1)
return granted
`;

/**
 * A waiter gives up. ARGV: its token, its ttl, settings (see SEMAPHORE_RELEASE), limit,
 * permits. A permit granted to it meanwhile goes back, and free permits to the next waiters.
 */
export const SEMAPHORE_LEAVE = `
local fence_retention, lease, sharded = string.match(ARGV[3], '^(%d+):(%d+):(%d)$')
${LIB}
local member = ARGV[1] .. ':' .. ARGV[2] .. ':' .. ARGV[5]
redis.call('LREM', KEYS[3], 1, member)
redis.call('ZREM', KEYS[4], member)
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('HDEL', KEYS[6], ARGV[1])
grant_fitting((free_permits(limit_in_use(ARGV[4]))), tonumber(lease), sharded)
forget_limit_if_idle()
return 1
`;
