import type { Cluster, Redis } from 'ioredis';

/**
 * The waiting queue of a lock: `queue` (a list) keeps arrival order, `waiters` (a sorted set)
 * the time until which each waiter is known to be alive. Both use the Redis server's clock
 * (`TIME`), never a client's. Dead waiters are dropped when they reach the head.
 */
const NOW = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/** Drops dead waiters from the head of the queue and returns the live head, if any. */
const LIVE_HEAD = `
local function live_head(queue, waiters, now)
  while true do
    local head = redis.call('LINDEX', queue, 0)
    if not head then return nil end
    local alive_until = redis.call('ZSCORE', waiters, head)
    if alive_until and tonumber(alive_until) >= now then return head end
    redis.call('LPOP', queue)
    redis.call('ZREM', waiters, head)
  end
end
`;

/**
 * Acquire in one round trip. KEYS: lock, fence, queue, waiters.
 * ARGV: owner token, ttl, whether to join the queue on failure ('1'/'0'), waiter lease (ms).
 * Succeeds when the lock is free and nobody waits ahead of the caller: `{1, fencingToken}`.
 * Otherwise `{0, pttl}` (pttl -2 when free but promised to the head of the queue, -1 for a key
 * without expiry), after joining the queue or refreshing the caller's place in it.
 */
const ACQUIRE = `${NOW}${LIVE_HEAD}
local now = now_ms()
local head = live_head(KEYS[3], KEYS[4], now)
if (not head or head == ARGV[1]) and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if head then
    redis.call('LPOP', KEYS[3])
    redis.call('ZREM', KEYS[4], ARGV[1])
  end
  return {1, redis.call('INCR', KEYS[2])}
end
if ARGV[3] == '1' then
  if redis.call('ZADD', KEYS[4], now + tonumber(ARGV[4]), ARGV[1]) == 1 then
    redis.call('RPUSH', KEYS[3], ARGV[1])
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
return {0, redis.call('PTTL', KEYS[1])}
`;

/** KEYS: lock. ARGV: owner token, ttl. Returns 1 when renewed, 0 when not the owner. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

/**
 * Renews many locks in one call. KEYS: the locks. ARGV: token and ttl of each, in turn.
 * Returns one 1 (renewed) or 0 (not the owner) per lock.
 */
const RENEW_MANY = `
local results = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then
    results[i] = redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  else
    results[i] = 0
  end
end
return results
`;

/**
 * KEYS: lock, queue, waiters, release channel (declared as a key so that it is routed and
 * ACL-checked with the lock). ARGV: owner token.
 * Returns `{0}` when not the owner, else `{1, head}`: the lock is deleted and, when someone
 * waits, the token of the waiter whose turn it is, which is also published so that exactly
 * that waiter wakes (`head` is '' when nobody waits and nothing is published).
 */
const RELEASE = `${NOW}${LIVE_HEAD}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
redis.call('DEL', KEYS[1])
local head = live_head(KEYS[2], KEYS[3], now_ms())
if head then
  redis.call('PUBLISH', KEYS[4], head)
  return {1, head}
end
return {1, ''}
`;

/**
 * A waiter gives up. KEYS: lock, queue, waiters, channel. ARGV: its token.
 * If the lock is free, the next waiter is told that it is its turn.
 */
const LEAVE = `${NOW}${LIVE_HEAD}
redis.call('LREM', KEYS[2], 1, ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local head = live_head(KEYS[2], KEYS[3], now_ms())
  if head then redis.call('PUBLISH', KEYS[4], head) end
end
return 1
`;

const COMMANDS = {
  acquire: { name: 'nestjsRedisLockAcquire', numberOfKeys: 4, lua: ACQUIRE },
  renew: { name: 'nestjsRedisLockRenew', numberOfKeys: 1, lua: RENEW },
  renewMany: { name: 'nestjsRedisLockRenewMany', numberOfKeys: null, lua: RENEW_MANY },
  release: { name: 'nestjsRedisLockRelease', numberOfKeys: 4, lua: RELEASE },
  leave: { name: 'nestjsRedisLockLeave', numberOfKeys: 4, lua: LEAVE },
} as const;

type ScriptCall<R> = (...args: (string | number)[]) => Promise<R>;

export type RedisClient = Redis | Cluster;

/** The Redis names a script call needs. */
export interface ScriptKeys {
  lock: string;
  fence: string;
  queue: string;
  waiters: string;
  released: string;
}

/** Outcome of one acquire attempt. */
export type AcquireReply = { acquired: true; fencingToken: number } | { acquired: false; pttl: number };

/** Outcome of a release: whether we held it, and the waiter whose turn it now is. */
export interface ReleaseReply {
  released: boolean;
  nextWaiter?: string;
}

/**
 * The lock protocol over one client. Scripts are registered with `defineCommand`, which sends
 * EVALSHA and falls back to EVAL when the server answers NOSCRIPT. The commands are reached
 * through this class, typed here, instead of augmenting ioredis' types for every user.
 */
export class LockScripts {
  private readonly calls: { [K in keyof typeof COMMANDS]: ScriptCall<unknown> };
  /**
   * ioredis prefixes the declared keys of a script with the client's `keyPrefix`, but cannot
   * know which arguments of the variadic renew script are keys; those get the prefix here.
   */
  private readonly keyPrefix: string;

  constructor(readonly client: RedisClient) {
    this.keyPrefix = clientKeyPrefix(client);
    for (const { name, numberOfKeys, lua } of Object.values(COMMANDS)) {
      client.defineCommand(name, numberOfKeys === null ? { lua } : { numberOfKeys, lua });
    }
    const commands = client as unknown as Record<string, ScriptCall<unknown>>;
    const bind = (name: string): ScriptCall<unknown> => commands[name]!.bind(client);
    this.calls = {
      acquire: bind(COMMANDS.acquire.name),
      renew: bind(COMMANDS.renew.name),
      renewMany: bind(COMMANDS.renewMany.name),
      release: bind(COMMANDS.release.name),
      leave: bind(COMMANDS.leave.name),
    };
  }

  async acquire(keys: ScriptKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<AcquireReply> {
    const [ok, value] = (await this.calls.acquire(keys.lock, keys.fence, keys.queue, keys.waiters, token, ttl, enqueue ? '1' : '0', waiterLease)) as [number, number];
    return ok === 1 ? { acquired: true, fencingToken: value } : { acquired: false, pttl: value };
  }

  async renew(lock: string, token: string, ttl: number): Promise<boolean> {
    return (await this.calls.renew(lock, token, ttl)) === 1;
  }

  /** `args` holds token and ttl of each lock in turn. */
  async renewMany(locks: string[], args: (string | number)[]): Promise<number[]> {
    const keys = this.keyPrefix ? locks.map((lock) => this.keyPrefix + lock) : locks;
    return (await this.calls.renewMany(keys.length, ...keys, ...args)) as number[];
  }

  async release(keys: ScriptKeys, token: string): Promise<ReleaseReply> {
    const [ok, head] = (await this.calls.release(keys.lock, keys.queue, keys.waiters, keys.released, token)) as [number, string?];
    return ok === 1 ? { released: true, nextWaiter: head || undefined } : { released: false };
  }

  async leave(keys: ScriptKeys, token: string): Promise<void> {
    await this.calls.leave(keys.lock, keys.queue, keys.waiters, keys.released, token);
  }

  async exists(lock: string): Promise<boolean> {
    return (await this.client.exists(lock)) === 1;
  }
}

/** The `keyPrefix` ioredis adds to the keys (not the channels) of this client's commands. */
export function clientKeyPrefix(client: RedisClient): string {
  const options = (client as { options?: { keyPrefix?: string; redisOptions?: { keyPrefix?: string } } }).options;
  return options?.keyPrefix ?? options?.redisOptions?.keyPrefix ?? '';
}
