import { NEXT_FENCING } from './fence-lua.js';

// The queue functions every lock script shares (the mutex's and the read side's of a
// read-write lock): one source, so that both sides hand the lock over alike.

/**
 * What every lock kind's scripts share (the semaphore's include it too): `next_fence` (INCR of a
 * fencing counter, restarting its expiry under a fenceRetention), `now_ms` (the server's clock),
 * `restore_list`, `join_queue`, `outlive` and `hset_guard`. `restore_list`: a queue list lost on
 * its own (evicted, or expired a moment before its set) gets the set's members back, the
 * longest-refreshed first, so that no waiter is left unseen in the set alone, where newcomers
 * would be let in ahead of it; every script calls it before it reads or joins the queue.
 * `join_queue` queues a waiter or refreshes its place, alive for another lease. `outlive` and
 * `hset_guard` keep the keys that guard leases as long as the leases.
 */
export const QUEUE_MEMBERS = `
-- The settings' sharded flag is '1' on a Redis Cluster: publish with SPUBLISH where this server
-- has it (Redis 7), with PUBLISH on an older one, which the cluster bus carries to every node
-- (the waiters' SSUBSCRIBE is refused there, and they SUBSCRIBE instead). Decided here, by the
-- server that runs the script, so that no call waits to hear every master's version.
if sharded == '1' and (tonumber(redis.REDIS_VERSION_NUM) or 0) < 0x070000 then sharded = '0' end

local function next_fence(fence)
  ${NEXT_FENCING}
  if fence_retention ~= '0' then redis.call('PEXPIRE', fence, fence_retention) end
  return fencing
end

-- Keeps an existing key for at least ms more: the keys that guard leases (a read lock's '~r'
-- value and readers hash, a semaphore's holders hash and due set) expire with the longest lease
-- they guard, so that holders that all crashed leave nothing behind. A key without expiry
-- (written by a version before guards had one, whose holders do not push it on) keeps none.
local function outlive(key, ms)
  local left = redis.call('PTTL', key)
  if left >= 0 and left < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end

-- HSET into a guarding hash: a new hash expires after ms, an existing one lives at least that long.
local function hset_guard(hash, field, value, ms)
  local new = redis.call('EXISTS', hash) == 0
  redis.call('HSET', hash, field, value)
  if new then redis.call('PEXPIRE', hash, ms) else outlive(hash, ms) end
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Answers true when it put members back (so a caller that found the list empty knows whether
-- anyone is queued without another read).
local function restore_list(queue, waiters)
  if redis.call('EXISTS', queue) == 1 then return end
  local lost = redis.call('ZRANGE', waiters, 0, -1)
  if #lost == 0 then return end
  for _, member in ipairs(lost) do redis.call('RPUSH', queue, member) end
  local left = redis.call('PTTL', waiters)
  if left > 0 then redis.call('PEXPIRE', queue, left) end
  return true
end

-- Joins the queue, or refreshes the caller's place in it: alive for another lease. The keys live
-- one lease more, the grace a waiter that lapsed keeps its place for (see live_head): else a lone
-- waiter's stall would delete the queue, and its place with it. \`restored\`: the script knows
-- restore_list would do nothing (the list exists, or both keys are gone). Answers 1 when the
-- caller was not queued before, else 0: its busy reply says so (see \`joined\` in lock-replies.ts).
local function join_queue(queue, waiters, member, now, lease, restored)
  if not restored then restore_list(queue, waiters) end
  local joined = redis.call('ZADD', waiters, now + lease, member)
  if joined == 1 then redis.call('RPUSH', queue, member) end
  redis.call('PEXPIRE', queue, 2 * lease)
  redis.call('PEXPIRE', waiters, 2 * lease)
  return joined
end
`;

/**
 * Every script that includes it first sets `fence_retention` (ms, '0' for none): with the
 * module's `fenceRetention`, each new fencing token also restarts the counter's expiry; and
 * `sharded` ('1' on a Cluster), which it lowers to '0' on a server older than Redis 7.
 * The scripts take that, the waiter lease and the sharded pub/sub flag as one "settings"
 * argument, `<fence retention>:<waiter lease>:<sharded>`: ioredis spends about 0.1 us of CPU
 * per argument of every call, more than the parsing costs Redis on the paths that need it.
 *
 * The waiting queue of a lock: `queue` (a list) keeps arrival order, `waiters` (a sorted set)
 * the time until which each waiter is known to be alive. Both hold `<token>:<ttl>` members and
 * use the Redis server's clock (`TIME`), never a client's. Dead waiters are dropped when they
 * reach the head.
 */
export const QUEUE = `${QUEUE_MEMBERS}

-- A lapsed waiter loses its place when it would be served. While readers hold the lock (grace:
-- the waiter lease), a writer that lapsed at the head less than grace ago keeps it, as at a busy
-- mutex; one lapsed longer is taken for dead, so that it holds readers up that long at most.
local function live_head(queue, waiters, now, grace)
  while true do
    local head = redis.call('LINDEX', queue, 0)
    if not head then
      restore_list(queue, waiters)
      head = redis.call('LINDEX', queue, 0)
      if not head then return nil end
    end
    local alive_until = tonumber(redis.call('ZSCORE', waiters, head))
    if alive_until and alive_until >= now then return head end
    if grace and alive_until and alive_until + grace >= now and string.sub(head, -2) ~= ':r' then return head end
    redis.call('LPOP', queue)
    redis.call('ZREM', waiters, head)
  end
end

-- Read-write locks (rwlock/): while readers hold a lock, its key holds '~r' (never an owner
-- token), and each reader has <lock>:reader:<token> (its lease) and an entry in the hash
-- <lock>:readers (token -> fencing token); '~r' and the hash expire with the longest reader
-- lease (see outlive; renewals push them on). Queue members of readers end in ':r'.
-- 1 when a reader's key is still there, 0 when none is (they may all have crashed): it stops at
-- the first live reader, dropping the entries of gone ones it meets before it. Every caller asks
-- only "none left?", on every reader's acquire and release: one EXISTS per reader of the hash,
-- all of them, made N overlapping readers cost Redis O(N^2) lookups.
local function readers_alive(lock)
  local readers = lock .. ':readers'
  local tokens = redis.call('HKEYS', readers)
  for i = 1, #tokens do
    if redis.call('EXISTS', lock .. ':reader:' .. tokens[i]) == 1 then return 1 end
    redis.call('HDEL', readers, tokens[i])
  end
  return 0
end

-- Lets reader token in for lease ms (the lock is free or held by readers): its key, its entry,
-- and the keys guarding it kept at least as long. Returns its fencing token. The first reader of
-- a free lock starts a new readers hash: entries left in one are of readers whose '~r' was taken
-- from them (deleted, evicted; a writer may have held the lock since), and must not find their
-- guards again (their renewal, see GUARDS in lock-lua.ts, must be refused).
local function admit_reader(lock, fence, token, lease)
  if redis.call('GET', lock) == '~r' then
    outlive(lock, lease)
  else
    redis.call('DEL', lock .. ':readers')
    redis.call('SET', lock, '~r', 'PX', lease)
  end
  redis.call('SET', lock .. ':reader:' .. token, token, 'PX', lease)
  local fencing = next_fence(fence)
  hset_guard(lock .. ':readers', token, fencing, lease)
  return fencing
end

-- Lets in every reader at the head of the queue (up to the first writer), each for at most
-- grant_ms, with its own message. Returns {token, fencing, token, fencing...} of every one let
-- in (so that a release can wake each waiter of its own process), or nil.
local function grant_readers(lock, fence, queue, waiters, channel, grant_ms, sharded)
  local granted
  local now = now_ms()
  while true do
    local head = live_head(queue, waiters, now, grant_ms)
    if not head then break end
    local token, ttl = string.match(head, '^([^:]+):([1-9]%d*):r$')
    if not token then break end
    local fencing = admit_reader(lock, fence, token, math.min(tonumber(ttl), grant_ms))
    redis.call('LPOP', queue)
    redis.call('ZREM', waiters, head)
    redis.call(sharded == '1' and 'SPUBLISH' or 'PUBLISH', channel, token .. ':' .. fencing)
    granted = granted or {}
    granted[#granted + 1] = token
    granted[#granted + 1] = fencing
  end
  return granted
end

-- Hands a free lock straight to the live head of the queue, for at most grant_ms: the waiter
-- renews it to its own ttl as soon as it wakes, and a waiter that died meanwhile blocks the
-- lock for grant_ms, not for a whole ttl. Publishes "<token>:<fencing token>", with SPUBLISH
-- when sharded is '1' (a Redis 7 master of a Cluster: only the shard that owns the lock carries it).
-- Returns {token, fencing}, or that of every reader let in (see grant_readers), or nil.
local function grant_next(lock, fence, queue, waiters, channel, grant_ms, sharded)
  local head, token, ttl
  repeat
    head = live_head(queue, waiters, now_ms())
    if not head then return nil end
    -- A ttl of 0 (no client of ours writes one) would make SET fail after the lock was freed.
    token, ttl = string.match(head, '^([^:]+):([1-9]%d*)$')
    if not token and string.match(head, '^[^:]+:[1-9]%d*:r$') then
      return grant_readers(lock, fence, queue, waiters, channel, grant_ms, sharded)
    end
    if not token then
      redis.call('LPOP', queue)
      redis.call('ZREM', waiters, head)
    end
  until token
  redis.call('SET', lock, token, 'PX', math.min(tonumber(ttl), grant_ms))
  local fencing = next_fence(fence)
  redis.call('LPOP', queue)
  redis.call('ZREM', waiters, head)
  redis.call(sharded == '1' and 'SPUBLISH' or 'PUBLISH', channel, token .. ':' .. fencing)
  return {token, fencing}
end
`;

/**
 * Reads of the queue's two keys (and of a readers hash, a due set, when given) that Redis refuses
 * with WRONGTYPE on a key of another type, written by something else: a script runs them before
 * its first write, so that such a key ends it with nothing changed. Lua does not undo a script's
 * writes made before its error: a release refused by the queue list once it had deleted the lock
 * told its caller the release failed, with the lock freed; a give-up refused by the waiters set
 * had taken the waiter out of the list alone. Reads the least-privilege user of docs/deployment.md
 * may run (`LINDEX`, `ZSCORE`, `HGET`; not `LLEN`, `ZCARD` or `HLEN`), each O(1).
 */
export const QUEUE_READABLE = (list: string, zset: string, ...more: { hash?: string; zset?: string }[]): string =>
  [`redis.call('LINDEX', ${list}, 0)`, `redis.call('ZSCORE', ${zset}, '')`, ...more.map((key) => (key.hash ? `redis.call('HGET', ${key.hash}, '')` : `redis.call('ZSCORE', ${key.zset!}, '')`))].join('\n');
