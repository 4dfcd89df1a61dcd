/**
 * The Lua of the lock protocol, in one place for every Redis driver (ioredis, node-redis).
 * docs/redis-data.md documents what these scripts read and write. The queue
 * functions every lock kind shares are in `queue-lua.ts`.
 */
import { LOCK_KEY_SUFFIXES } from '../../keys/lock-key.js';
import { CHECK_FENCING, CHECK_INCR, NEXT_FENCING, nextFencingUndoing } from './fence-lua.js';
import { QUEUE, QUEUE_READABLE } from './queue-lua.js';
import { FREED_MESSAGE } from '../lock-replies.js';

/**
 * The barging waiters' key (see `wantedKey`), derived from the lock's name in both layouts: it
 * is read only by the calls that already run the queue's code, and a Cluster keeps it in the
 * lock's slot (same hash tag); during a slot migration a release may miss it, and the waiters
 * then find the lock on their next refresh.
 */
const WANTED = `local wanted = KEYS[1] .. '${LOCK_KEY_SUFFIXES.wanted}'`;
import { ON_REPLICA } from './replica-lua.js';
import { QUORUM_ACQUIRE, QUORUM_RELEASE } from '../quorum/quorum-lua.js';
import { SEMAPHORE_HAND_ON } from '../../semaphore/semaphore-lua.js';

/**
 * How the acquire and release scripts, which every lock runs, name a lock's five keys (lock,
 * fence, queue, waiters, release channel). On a Redis Cluster every one is a declared key
 * (KEYS[1..5]): only declared keys route the call and take part in slot migration (ASK,
 * TRYAGAIN), and the channel is declared so that it is routed and ACL-checked with the lock.
 * Anywhere else (one server, Sentinel, each node of a quorum) only the lock is declared and the
 * other four are its name plus their suffixes, as `lockRedisKeys` names them: four arguments fewer
 * on each of the two calls every lock makes, which is most of what the client spends per
 * argument. ioredis' and node-redis' key prefixes go on the declared key, so on the others too.
 */
const KEYS_OF_LOCK = {
  declared: `local lock, fence, queue, waiters, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]\n${WANTED}`,
  derived:
    `local lock = KEYS[1]\n` +
    `local fence, queue, waiters, channel = lock .. '${LOCK_KEY_SUFFIXES.fence}', lock .. '${LOCK_KEY_SUFFIXES.queue}', ` +
    `lock .. '${LOCK_KEY_SUFFIXES.waiters}', lock .. '${LOCK_KEY_SUFFIXES.released}'\n${WANTED}`,
} as const;

/**
 * Acquire in one round trip. Keys: lock, fence, queue, waiters, channel (see `KEYS_OF_LOCK`).
 * ARGV: owner token, ttl, settings (see QUEUE) followed by `:1` to join the queue on failure,
 * `:0` not to, or `:2` (a barging waiter, `fairness: 'barging'`) to say only that it waits:
 * `wanted` is set for a waiter lease, so that releases publish `*` (the lock is free) for it.
 * Succeeds (the fencing token, an integer: cheaper for Redis to write and the client to read
 * than an array) when the lock is free and nobody waits ahead of the caller, or
 * when a release already handed it to the caller (the lease then restarts at full ttl, under
 * the next token: the caller has not used the grant's).
 * Otherwise `{0, pttl, fence, joined}` (pttl -1 for a key without expiry; fence the fencing
 * counter, which shows the caller that any grant it may still hear of with a token up to it is
 * stale; joined 1 when the caller was not in the queue before this call), after joining the
 * queue or refreshing the caller's place in it; a free lock promised to another waiter is
 * handed to it then.
 *
 * The fast path comes first and costs Redis EXISTS + SET NX PX + INCR: with neither queue key
 * nobody waits (the list is deleted with its last member and both expire together), so no
 * server time is needed (but for a new fencing counter, see NEXT_FENCING) and the queue functions
 * are not even defined. A counter no token can come from ends it with the lock it set deleted
 * (see nextFencingUndoing); the slow path looks at the counter (GET, see CHECK_FENCING) before
 * any write of its own.
 */
const ACQUIRE = `
if redis.call('EXISTS', queue, waiters) == 0 and redis.call('SET', lock, ARGV[1], 'NX', 'PX', ARGV[2]) then
  ${nextFencingUndoing("redis.call('DEL', lock)")}
  -- A retention never starts with '0' unless it is '0' (none).
  if string.byte(ARGV[3], 1) ~= 48 then redis.call('PEXPIRE', fence, string.match(ARGV[3], '^%d+')) end
  return fencing
end
${CHECK_FENCING}
local fence_retention, lease, sharded, enqueue = string.match(ARGV[3], '^(%d+):(%d+):(%d):(%d)$')
lease = tonumber(lease)
${QUEUE_READABLE('queue', 'waiters')}
${QUEUE}
local owner = redis.call('GET', lock)
if owner == ARGV[1] then
  redis.call('PEXPIRE', lock, ARGV[2])
  -- The next token, as a first grant's (the quorum masters' ACQUIRE does the same): the counter as
  -- it stands may be a token another holder got since the grant (a semaphore of the same name
  -- shares it), which would then be handed out twice. A counter lost since (evicted, or expired
  -- under a fenceRetention) starts again at the clock, as any lost counter does.
  return next_fence(fence)
end
local now = now_ms()
local member = ARGV[1] .. ':' .. ARGV[2]
-- Held by readers that have all gone (crashed): free.
if owner == '~r' and readers_alive(lock) == 0 then
  redis.call('DEL', lock)
  owner = false
end
if not owner then
  local head = live_head(queue, waiters, now)
  if not head or head == member then
    redis.call('SET', lock, ARGV[1], 'PX', ARGV[2])
    if head then
      redis.call('LPOP', queue)
      redis.call('ZREM', waiters, member)
    end
    return next_fence(fence)
  end
  grant_next(lock, fence, queue, waiters, channel, lease, sharded)
end
local joined = 0
if enqueue == '1' then
  joined = join_queue(queue, waiters, member, now, lease)
elseif enqueue == '2' then
  redis.call('SET', wanted, '1', 'PX', lease)
end
return {0, redis.call('PTTL', lock), tonumber(redis.call('GET', fence) or '0'), joined}
`;

/**
 * What a renew script reports for each lock: renewed; held by another token; gone (no such key:
 * it expired, or a node restarted empty); or, for a key that is not a declared key of the call,
 * not served or not found by this node (its slot is migrating or moved: ask again with the key
 * declared).
 */
export const RENEWED = 1;
export const NOT_OURS = 0;
export const GONE = 2;
export const ELSEWHERE = 3;
/**
 * GONE, from a semaphore permit whose renewal dropped its holder's entry while waiters are
 * queued, and could not hand the permits that freed to them (a Cluster, see SEMAPHORE_HAND_ON):
 * the client hands them on (`LockScripts`), and reports GONE. Never seen past the store.
 */
export const HAND_ON = 4;

/**
 * A reader's lease (`<lock>:reader:<token>`) and a semaphore permit (`<lock>:permit:<token>`)
 * are guarded by keys that must outlive them, and expire with the longest lease they guard: a
 * read lock's '~r' value and readers hash, a semaphore's holders hash and due set (see `outlive`
 * in `queue-lua.ts`; one without expiry keeps none). Renewing such a lease pushes them on too.
 * A lock's own key ends in '}', so a mutex pays one byte comparison. Answers false, renewing
 * nothing, when the guard that keeps others out is not there (the `~r` value and the reader's
 * entry, or the holder's entry in the semaphore's hash): during a slot migration the own key may
 * have moved while the guards have not, and a lease renewed without them would outlive them,
 * letting a writer or another holder in beside it. The caller answers ELSEWHERE (not renewed,
 * not known lost): the next renewal tries again, and the lock is lost at its deadline if none
 * finds its guards. `redis.pcall`: a guard not served here reads as missing.
 */
const GUARDS = `
local function outlive_guard(key, ms)
  local left = redis.pcall('PTTL', key)
  if type(left) == 'number' and left >= 0 and left < ms then redis.pcall('PEXPIRE', key, ms) end
end
local function renew_guards(key, token, ttl)
  if string.byte(key, -1) == 125 then return true end
  local cut = #key - #token - 8
  if cut < 1 or string.sub(key, cut + 9) ~= token then return true end
  local kind, base, ms = string.sub(key, cut + 1, cut + 8), string.sub(key, 1, cut), tonumber(ttl)
  if kind == ':reader:' then
    if redis.pcall('GET', base) ~= '~r' or type(redis.pcall('HGET', base .. ':readers', token)) ~= 'string' then return false end
    outlive_guard(base, ms)
    outlive_guard(base .. ':readers', ms)
  elseif kind == ':permit:' then
    if type(redis.pcall('HGET', base .. ':holders', token)) ~= 'string' then return false end
    outlive_guard(base .. ':holders', ms)
    outlive_guard(base .. ':due', ms)
    -- A lease made shorter than it was (extend() with a shorter ttl) must be looked at again by
    -- the next count, not only once its old deadline (the holder's score in the due set) passed.
    local left = redis.pcall('PTTL', key)
    if type(left) == 'number' and left > ms then redis.pcall('ZADD', base .. ':due', 'XX', 0, token) end
  end
  return true
end
-- A semaphore permit found missing (evicted, deleted: its holder is told it lost the lock) whose
-- entry is still in the holders hash: its permits stay counted until a count looks at it, after
-- its known deadline (its old lease). \`sure\`: the key was declared, and missing is Redis' word:
-- the entry goes now, as a count would drop it (the hash and the due set too when it was the last
-- holder and nobody is queued), so that the fast paths count right and the last release leaves
-- nothing; with waiters queued, the permits it freed go to them as from a release (see
-- SEMAPHORE_HAND_ON in semaphore/semaphore-lua.ts), rather than at their next poll; answers true
-- when it could not (the mark holds no settings: a Cluster's), for the client to (see HAND_ON).
-- Its first write adds no memory (DEL, HDEL): under a full maxmemory Redis refuses a script's
-- first write that may (a lone renewal's HSET was, and the entry stayed), and lets the rest run,
-- as it lets a release's grants after its DEL. Not sure (an undeclared key of a batch on a
-- Cluster master, whose slot may be migrating), or a write refused (a replica), it is made due:
-- the next count looks at its permit. pcall: the hash may not be served here.
local function write_refused(reply) return type(reply) == 'table' and reply.err ~= nil end
${SEMAPHORE_HAND_ON}
local function forget_permit(base, token, sure)
  local holders, due = base .. ':holders', base .. ':due'
  local entry = redis.pcall('HGET', holders, token)
  if type(entry) ~= 'string' then return end
  if sure then
    local counts = redis.call('HMGET', holders, ':used', ':queued')
    local left = tonumber(counts[1] or '0') - tonumber(string.match(entry, '^(%d+)') or '0')
    if left <= 0 and not counts[2] then
      if not write_refused(redis.pcall('DEL', holders)) then
        redis.pcall('DEL', due)
        return
      end
    elseif not write_refused(redis.pcall('HDEL', holders, token)) then
      redis.call('HSET', holders, ':used', math.max(left, 0))
      redis.pcall('ZREM', due, token)
      if counts[2] then return hand_on_freed(base, token, counts[2]) end
      return
    end
  end
  redis.pcall('ZADD', due, 'XX', 0, token)
end
-- A semaphore's holder alone has no permit key: the field '!<token>' of the holders hash is its
-- permit, and the hash's expiry its lease (see LONE in semaphore/semaphore-lua.ts). Asked to renew
-- a permit key that is missing, this renews the hash when it has the token's field (the PEXPIRE
-- reply), else answers nil (and forgets the permit of a holder in the full layout, see
-- forget_permit: HAND_ON when the waiters are owed what that freed). A mutex's key ends in '}':
-- one byte comparison. pcall: the hash may be of another type (nothing of ours), or not served
-- here during a slot migration.
local function renew_alone(key, token, ttl, sure)
  if string.byte(key, -1) == 125 then return nil end
  local cut = #key - #token - 8
  if cut < 1 or string.sub(key, cut + 1) ~= ':permit:' .. token then return nil end
  local base = string.sub(key, 1, cut)
  -- HGET, not HEXISTS: the least-privilege ACL (docs/deployment.md) allows it already.
  local field = redis.pcall('HGET', base .. ':holders', '!' .. token)
  if type(field) ~= 'string' then
    if forget_permit(base, token, sure) then return ${HAND_ON} end
    return nil
  end
  return redis.call('PEXPIRE', base .. ':holders', ttl)
end
`;

/** KEYS: lock. ARGV: owner token, ttl. Returns RENEWED, NOT_OURS, GONE, HAND_ON, or ELSEWHERE (guards missing, see GUARDS). */
const RENEW = `${ON_REPLICA}${GUARDS}
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then
  if not renew_guards(KEYS[1], ARGV[1], ARGV[2]) then return 3 end
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if not owner then
  local alone = renew_alone(KEYS[1], ARGV[1], ARGV[2], true)
  if alone then return alone end
end
return on_replica() or (owner and 0 or 2)
`;

/**
 * The loop shared by the batch renew scripts: `n` locks, the i-th named by `key(i)`, its token
 * and ttl at ARGV[offset + 2i - 1] and ARGV[offset + 2i]. One code per lock (see RENEWED).
 * `guarded`: only the first key is declared, so reading another one that this node does not
 * serve raises an error; it is caught and reported as ELSEWHERE for that lock alone, instead of
 * failing the call. A missing undeclared key is ELSEWHERE too, never GONE: when the first lock's
 * slot is migrating and that lock has already moved, the client resends the whole call to the
 * importing node with ASKING, which then serves the slot, and reads the locks of that slot not
 * moved yet as missing. Only a declared key's answer is Redis' word (it follows ASK, MOVED and
 * TRYAGAIN), so the client asks again with the lock declared (one more call for a lock that is
 * truly gone, which happens once per lost lock). A key of another type (a hash where a lock's
 * string is: WRONGTYPE) is ELSEWHERE too, declared or not, and the client renews it alone: its
 * refusal then fails that lock's renewal only, where it failed the call, every lock of the batch
 * unconfirmed (in quorum mode, on a majority of masters, every one lost as its lease ran out).
 * Renewing adds no memory (PEXPIRE of keys that already have an expiry); off a Cluster, a
 * semaphore permit found gone may free permits that go to waiters (see forget_permit), and on a
 * Cluster its answer is HAND_ON for the client to hand them on.
 */
const RENEW_LOOP = `${ON_REPLICA}${GUARDS}
local function renew_all(n, key, offset, guarded)
  local results = {}
  local refused = false
  for i = 1, n do
    -- pcall: a key of another type (data this library did not write) answers ELSEWHERE for that
    -- lock alone, renewed on its own by the client then, rather than failing every lock of the call.
    local owner = redis.pcall('GET', key(i))
    local alone
    if not owner then alone = renew_alone(key(i), ARGV[offset + 2 * i - 1], ARGV[offset + 2 * i], not guarded or i == 1) end
    if alone then
      results[i] = alone
    elseif (type(owner) == 'table' and owner.err) or (guarded and i > 1 and not owner) then
      results[i] = 3
    elseif owner == ARGV[offset + 2 * i - 1] then
      if renew_guards(key(i), owner, ARGV[offset + 2 * i]) then
        results[i] = redis.call('PEXPIRE', key(i), ARGV[offset + 2 * i])
      else
        results[i] = 3
      end
    else
      results[i] = owner and 0 or 2
      refused = true
    end
  end
  if refused then return on_replica() or results end
  return results
end
`;

/** Renews many locks in one call. KEYS: the locks. ARGV: token and ttl of each, in turn. */
const RENEW_MANY = `${RENEW_LOOP}
return renew_all(#KEYS, function(i) return KEYS[i] end, 0, false)
`;

/**
 * A lock was freed: when barging waiters said they wait (`wanted`), publishes `*` on its channel
 * so that they race for it (each process wakes one of its waiters; see `ReleaseNotifier`), and
 * deletes `wanted` (one `DEL` for the check and the reset). The waiters that lose the race set it
 * again, so a holder that releases and takes the lock again at once publishes once per round
 * trip of its waiters, not on every release (as a Java AQS lock signals its waiters once).
 * Returns whether it published. Publishes as `grant_next` does (SPUBLISH on a Redis 7 Cluster
 * master).
 */
export const PUBLISH_FREED = `
local function publish_freed(wanted, channel, sharded)
  if redis.call('DEL', wanted) == 0 then return false end
  if sharded == '1' and (tonumber(redis.REDIS_VERSION_NUM) or 0) < 0x070000 then sharded = '0' end
  redis.call(sharded == '1' and 'SPUBLISH' or 'PUBLISH', channel, '${FREED_MESSAGE}')
  return true
end`;

/**
 * Keys: lock, fence, queue, waiters, release channel (see `KEYS_OF_LOCK`). ARGV: owner token,
 * settings (see QUEUE).
 * Returns `0` when not the owner. Otherwise deletes the lock and, when someone waits, hands
 * it to the waiter whose turn it is: `{1, token, fencingToken}` of that waiter (or
 * `{1, token, fencingToken, token, fencingToken...}` of the readers at the head, all let in
 * together), else `1` (integers, not arrays, on the paths every lock takes).
 * With nobody waiting (no queue key, no `wanted`) that is GET + DEL + EXISTS, and the queue
 * functions are not defined at all. With only barging waiters (`wanted` alone) the lock stays
 * free and `*` is published (see `PUBLISH_FREED`): whoever asks first takes it. When the queue
 * hands the lock to nobody (all its waiters died) and barging waiters wait, `*` goes out too.
 *
 * Parking (`fairness: 'barging'`, see `engine/lock-parking.ts`): with ARGV[3] (a fresh owner
 * token) and ARGV[4] (its ttl), and nobody queued (barging waiters may wait), the lock is not
 * freed but handed to that token under a new fencing token (INCR, as an acquire would), for that
 * ttl, and nothing is published: `{2, fencingToken, wanted}`, `wanted` 1 when barging waiters
 * said they wait. With queued waiters (or when Redis refuses the write: memory full) the
 * release goes on as without ARGV[3]. The releaser's
 * process hands that lock to its next caller without a round trip, or frees it with a plain
 * release under the parked token.
 */
const RELEASE = `
if redis.call('GET', lock) ~= ARGV[1] then
  ${ON_REPLICA}
  return on_replica() or 0
end
-- pcall: under a full maxmemory Redis refuses a script's first write that may grow memory (the
-- SET, where a plain release starts with DEL): the lock is then freed as without ARGV[3].
if ARGV[3] and redis.call('EXISTS', queue, waiters) == 0 then
  ${CHECK_FENCING}
  -- Read before the SET too: a refusal of it (an ACL that forbids the key) must come before any write.
  local wanting = redis.call('EXISTS', wanted)
  if not redis.pcall('SET', lock, ARGV[3], 'PX', ARGV[4]).err then
    ${NEXT_FENCING}
    if string.byte(ARGV[2], 1) ~= 48 then redis.call('PEXPIRE', fence, string.match(ARGV[2], '^%d+')) end
    return {2, fencing, wanting}
  end
end
local waiting = redis.call('EXISTS', queue, waiters, wanted)
if waiting == 0 then
  redis.call('DEL', lock)
  return 1
end
local fence_retention, lease, sharded = string.match(ARGV[2], '^(%d+):(%d+):(%d)$')
${PUBLISH_FREED}
if waiting == 1 and publish_freed(wanted, channel, sharded) then
  redis.call('DEL', lock)
  return 1
end
-- The lock may go to a waiter under the next token: the counter is looked at before the lock is
-- freed, so that a refusal leaves it held by the releaser (Lua undoes no write made before it).
${CHECK_FENCING}
${QUEUE_READABLE('queue', 'waiters')}
redis.call('DEL', lock)
${QUEUE}
local granted = grant_next(lock, fence, queue, waiters, channel, tonumber(lease), sharded)
if not granted then
  publish_freed(wanted, channel, sharded)
  return 1
end
table.insert(granted, 1, 1)
return granted
`;

/**
 * A waiter gives up. KEYS: lock, fence, queue, waiters, channel. ARGV: its token, its ttl,
 * settings (see QUEUE). A lock handed to it meanwhile, or a free lock, goes to the next waiter;
 * a lock its own attempt took, or a key held by readers that all crashed (freed here), with
 * nobody queued frees barging waiters (`*`).
 */
const LEAVE = `
local fence = KEYS[2]
${CHECK_FENCING}
${QUEUE_READABLE('KEYS[3]', 'KEYS[4]')}
local fence_retention, lease, sharded = string.match(ARGV[3], '^(%d+):(%d+):(%d)$')
${QUEUE}${PUBLISH_FREED}
local member = ARGV[1] .. ':' .. ARGV[2]
redis.call('LREM', KEYS[3], 1, member)
redis.call('ZREM', KEYS[4], member)
local owner = redis.call('GET', KEYS[1])
local freed = owner == ARGV[1]
if freed then redis.call('DEL', KEYS[1]) end
if owner == '~r' and readers_alive(KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  owner = false
  freed = true
end
if freed or not owner then
  local granted = grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(lease), sharded)
  -- A lock an uncertain attempt took, given back, or one whose readers all crashed, freed here:
  -- barging waiters race for it.
  if not granted and freed then publish_freed(KEYS[1] .. '${LOCK_KEY_SUFFIXES.wanted}', KEYS[5], sharded) end
elseif owner == '~r' then
  -- A waiting writer that gives up may have been all that held back the readers behind it.
  grant_readers(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(lease), sharded)
end
return 1
`;

/**
 * Quorum mode: raises a node's fencing counter to at least ARGV[1]. KEYS: fence. ARGV[2]: fence
 * retention (ms, '0' for none), which the raised counter keeps. Every later majority shares a
 * node with this one, so its next token is higher than the one handed out. A counter the acquire
 * script's `INCR` refuses (a word, the largest integer Redis keeps, a key of another type: written
 * by something else) ends it with that refusal, Redis' own words, and nothing written (`CHECK_INCR`):
 * `tonumber()` failed a word with "attempt to compare nil with number", naming nothing, and wrote the
 * token over one it reads (`1e5`, ` 7`). A value past 2^53 is above any token: left as it is.
 */
const FENCE_FLOOR = `
local fence = KEYS[1]
${CHECK_INCR}
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < tonumber(ARGV[1]) then
  if ARGV[2] ~= '0' then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  else
    redis.call('SET', KEYS[1], ARGV[1])
  end
end
return 1
`;

/**
 * Redis 7 Cluster: renews locks of many slots served by one node in one call. Redis refuses
 * declared keys of different slots even with `allow-cross-slot-keys`, so only the first lock
 * is declared (it routes the call) and the others come as arguments, which the flag lets the
 * script touch. KEYS: the first lock. ARGV: n, the other n-1 locks, then token and ttl of each.
 * A lock after the first that this node does not serve (resharding, stale slot map) or does not
 * have comes back as ELSEWHERE and is renewed on its own by the client (see RENEW_LOOP). `allow-oom`: a script with flags is
 * otherwise refused whole under a full `maxmemory`, although a renewal adds no memory (a Cluster's
 * semaphore permit found gone hands nothing on here: its client does, see HAND_ON).
 */
const RENEW_NODE = `#!lua flags=allow-cross-slot-keys,allow-oom
${RENEW_LOOP}
local n = tonumber(ARGV[1])
return renew_all(n, function(i) return i == 1 and KEYS[1] or ARGV[i] end, n, true)
`;

/**
 * Every script, under the namespaced name ioredis registers it with (`defineCommand`) and the
 * number of its declared keys (`null`: the call passes the count first).
 */
export const COMMANDS = {
  acquire: { name: 'nestjsRedisLockAcquire', numberOfKeys: 5, lua: KEYS_OF_LOCK.declared + ACQUIRE },
  acquireOneKey: { name: 'nestjsRedisLockAcquireOneKey', numberOfKeys: 1, lua: KEYS_OF_LOCK.derived + ACQUIRE },
  renew: { name: 'nestjsRedisLockRenew', numberOfKeys: 1, lua: RENEW },
  renewMany: { name: 'nestjsRedisLockRenewMany', numberOfKeys: null, lua: RENEW_MANY },
  renewNode: { name: 'nestjsRedisLockRenewNode', numberOfKeys: 1, lua: RENEW_NODE },
  release: { name: 'nestjsRedisLockRelease', numberOfKeys: 5, lua: KEYS_OF_LOCK.declared + RELEASE },
  releaseOneKey: { name: 'nestjsRedisLockReleaseOneKey', numberOfKeys: 1, lua: KEYS_OF_LOCK.derived + RELEASE },
  leave: { name: 'nestjsRedisLockLeave', numberOfKeys: 5, lua: LEAVE },
  fenceFloor: { name: 'nestjsRedisLockFenceFloor', numberOfKeys: 1, lua: FENCE_FLOOR },
  quorumAcquire: { name: 'nestjsRedisLockQuorumAcquire', numberOfKeys: 1, lua: QUORUM_ACQUIRE },
  quorumRelease: { name: 'nestjsRedisLockQuorumRelease', numberOfKeys: 1, lua: QUORUM_RELEASE },
} as const;

export type ScriptName = keyof typeof COMMANDS;

/**
 * KEYS: a fencing counter. ARGV: the fence retention in ms. Pushes the counter's expiry to the
 * retention from now, where it has one (PEXPIRE XX is Redis 7; PTTL keeps Redis 6 served): a lock
 * held longer than the retention (a leader's term, an owner lease) must not outlive its counter,
 * or the next holder's token comes from a new counter (started at the clock: above the old one's
 * tokens only while it averaged under 1,000 a second, see NEXT_FENCING). A counter without expiry
 * is left alone.
 */
export const KEEP_FENCE = `
if redis.call('PTTL', KEYS[1]) > 0 then return redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 0
`;
