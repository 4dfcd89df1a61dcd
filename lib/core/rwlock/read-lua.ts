import { LOCK_KEY_SUFFIXES } from '../keys/lock-key.js';
import { PUBLISH_FREED } from '../stores/redis/lock-lua.js';
import { QUEUE, QUEUE_READABLE } from '../stores/redis/queue-lua.js';
import { CHECK_FENCING } from '../stores/redis/fence-lua.js';

/**
 * The read side of a read-write lock; the write side is the plain lock, whose scripts know
 * readers (see `readers_alive` and `grant_readers` in the queue functions of
 * `queue-lua.ts`). KEYS of every script: lock, fence, queue, waiters, release channel, this
 * reader's key (`<lock>:reader:<token>`), the readers hash (`<lock>:readers`). While readers
 * hold the lock, its key holds '~r'; each reader's own key carries its lease (renewed like a
 * lock), so readers that crashed are found out by the next script that counts them, and '~r'
 * and the readers hash expire with the longest reader lease (renewals push them on too).
 * Readers and writers wait in the one queue (readers' members end in ':r'): a reader arriving
 * after a waiting writer queues behind it.
 */

/**
 * ARGV: owner token, ttl, settings `<fence retention>:<waiter lease>:<sharded>:<enqueue>`.
 * Returns `{1, fencing}` (acquired, or already let in: the lease restarts at ttl) or
 * `{0, pttl, fence, joined}` (pttl the lock key's: while readers hold, the `~r` value's, which keeps the
 * longest lease it guarded; fence and joined as the lock's ACQUIRE answers them).
 */
export const READ_ACQUIRE = `
local fence = KEYS[2]
${CHECK_FENCING}
local fence_retention, lease, sharded, enqueue = string.match(ARGV[3], '^(%d+):(%d+):(%d):(%d)$')
lease = tonumber(lease)
${QUEUE}
local function mine()
  local fencing = redis.call('HGET', KEYS[7], ARGV[1])
  if fencing and redis.call('GET', KEYS[6]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[6], ARGV[2])
    outlive(KEYS[1], ARGV[2])
    outlive(KEYS[7], ARGV[2])
    return {1, tonumber(fencing)}
  end
end
local owner = redis.call('GET', KEYS[1])
if owner == '~r' then
  local granted = mine()
  if granted then return granted end
  if readers_alive(KEYS[1]) == 0 then
    redis.call('DEL', KEYS[1])
    owner = false
  end
end
local now = now_ms()
local member = ARGV[1] .. ':' .. ARGV[2] .. ':r'
-- The head matters only to a lock that is free or held by readers; read while a writer holds,
-- it would drop a lapsed waiter that keeps its place until the lock comes free.
local function head_if_open()
  if not owner or owner == '~r' then return live_head(KEYS[3], KEYS[4], now, owner == '~r' and lease or nil) end
end
local head = head_if_open()
if head and head ~= member then
  -- Others are owed the lock first: a free lock goes to the head, readers at the head join readers.
  if not owner then
    grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], lease, sharded)
  elseif owner == '~r' then
    grant_readers(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], lease, sharded)
  end
  local granted = mine()
  if granted then return granted end
  owner = redis.call('GET', KEYS[1])
  head = head_if_open()
end
if (not owner or owner == '~r') and (not head or head == member) then
  if head then
    redis.call('LPOP', KEYS[3])
    redis.call('ZREM', KEYS[4], member)
  end
  local fencing = admit_reader(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
  -- Readers queued right behind this one come in with it.
  grant_readers(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], lease, sharded)
  return {1, fencing}
end
local joined = 0
if enqueue == '1' then joined = join_queue(KEYS[3], KEYS[4], member, now, lease) end
-- The fencing counter too: a grant to this caller up to it expired before this call (see the lock's ACQUIRE).
return {0, redis.call('PTTL', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0'), joined}
`;

/**
 * ARGV: owner token, settings `<fence retention>:<waiter lease>:<sharded>`. Returns `{0}` when
 * this reader no longer holds the lock, else `{1}`, or `{1, token, fencing...}` of the waiter
 * (or the readers) the lock went to when this was the last reader (`{0, token, fencing...}`
 * when this reader's lease had lapsed and no reader was left). The last reader that hands
 * the lock to nobody publishes `*` when barging writers wait (`<lock>:wanted`).
 */
export const READ_RELEASE = `
-- Someone queued may be let in under the next token: the counter is looked at before any write.
if redis.call('EXISTS', KEYS[3], KEYS[4]) > 0 then
  local fence = KEYS[2]
  ${CHECK_FENCING}
  ${QUEUE_READABLE('KEYS[3]', 'KEYS[4]')}
end
-- Before the reader's key goes: a readers hash of another type would refuse the HDEL after it.
redis.call('HGET', KEYS[7], '')
local held = 1
if redis.call('GET', KEYS[6]) ~= ARGV[1] then
  if string.find(redis.call('INFO', 'replication'), 'role:slave', 1, true) then
    return redis.error_reply('READONLY this node is a replica: lock ownership cannot be checked here')
  end
  held = 0
else
  redis.call('DEL', KEYS[6])
end
redis.call('HDEL', KEYS[7], ARGV[1])
local fence_retention, lease, sharded = string.match(ARGV[2], '^(%d+):(%d+):(%d)$')
${QUEUE}
-- Also when this reader's own lease lapsed: '~r' may guard no live reader any more, and left
-- there it would hold off writers until it lapses too (the longest reader lease).
if redis.call('GET', KEYS[1]) == '~r' and readers_alive(KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  local granted = grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(lease), sharded)
  if granted then
    table.insert(granted, 1, held)
    return granted
  end
  -- Free: barging writers that said they wait race for it, as after a writer's release.
  ${PUBLISH_FREED}
  publish_freed(KEYS[1] .. '${LOCK_KEY_SUFFIXES.wanted}', KEYS[5], sharded)
end
return {held}
`;

/**
 * A waiting reader gives up. ARGV: its token, its ttl, settings (see READ_RELEASE). What was
 * handed to it meanwhile goes to the next waiters.
 */
export const READ_LEAVE = `
local fence = KEYS[2]
${CHECK_FENCING}
${QUEUE_READABLE('KEYS[3]', 'KEYS[4]', { hash: 'KEYS[7]' })}
redis.call('GET', KEYS[6])
local fence_retention, lease, sharded = string.match(ARGV[3], '^(%d+):(%d+):(%d)$')
lease = tonumber(lease)
${QUEUE}
local member = ARGV[1] .. ':' .. ARGV[2] .. ':r'
redis.call('LREM', KEYS[3], 1, member)
redis.call('ZREM', KEYS[4], member)
if redis.call('GET', KEYS[6]) == ARGV[1] then redis.call('DEL', KEYS[6]) end
redis.call('HDEL', KEYS[7], ARGV[1])
local owner = redis.call('GET', KEYS[1])
local freed = false
if owner == '~r' and readers_alive(KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  owner = false
  freed = true
end
if not owner then
  local granted = grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], lease, sharded)
  -- The last reader (let in by an attempt its caller gave up on) freed the lock: barging
  -- writers race for it, as after a reader's release.
  if freed and not granted then
    ${PUBLISH_FREED}
    publish_freed(KEYS[1] .. '${LOCK_KEY_SUFFIXES.wanted}', KEYS[5], sharded)
  end
elseif owner == '~r' then
  grant_readers(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], lease, sharded)
end
return 1
`;

/**
 * Whether a lock is held, for `isLocked()` and `inspect()`: a key held by readers (`~r`) counts
 * only while one of its readers' keys is still there (they may all have crashed; the next script
 * on the lock frees it). Reads only. KEYS: lock, readers hash.
 */
export const LOCK_HELD = `
local owner = redis.call('GET', KEYS[1])
if owner ~= '~r' then return owner and 1 or 0 end
for _, token in ipairs(redis.call('HKEYS', KEYS[2])) do
  if redis.call('EXISTS', KEYS[1] .. ':reader:' .. token) == 1 then return 1 end
end
return 0
`;
