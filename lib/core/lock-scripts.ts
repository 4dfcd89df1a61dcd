import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { clusterSlot } from './cluster-slot.js';
import { QUEUE } from './queue-lua.js';
import type { LockSnapshot, LockStore, RenewalOutcome, RenewalPart, RenewalRequest } from './lock-store.js';
import { SemaphoreScripts } from './semaphore/semaphore-scripts.js';
import { ReadScripts } from './rwlock/read-scripts.js';


/**
 * Acquire in one round trip. KEYS: lock, fence, queue, waiters, channel.
 * ARGV: owner token, ttl, settings (see QUEUE) followed by `:1` to join the queue on failure or
 * `:0` not to.
 * Succeeds (`{1, fencingToken}`) when the lock is free and nobody waits ahead of the caller, or
 * when a release already handed it to the caller (the lease then restarts at full ttl).
 * Otherwise `{0, pttl}` (-1 for a key without expiry), after joining the queue or refreshing
 * the caller's place in it; a free lock promised to another waiter is handed to it then.
 *
 * The fast path comes first and costs Redis EXISTS + SET NX PX + INCR: with no queue key
 * nobody waits (the queue list is deleted with its last member and expires with its waiters),
 * so no server time is needed and the queue functions are not even defined.
 */
const ACQUIRE = `
if redis.call('EXISTS', KEYS[3]) == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fencing = redis.call('INCR', KEYS[2])
  -- A retention never starts with '0' unless it is '0' (none).
  if string.byte(ARGV[3], 1) ~= 48 then redis.call('PEXPIRE', KEYS[2], string.match(ARGV[3], '^%d+')) end
  return {1, fencing}
end
local fence_retention, lease, sharded, enqueue = string.match(ARGV[3], '^(%d+):(%d+):(%d):(%d)$')
lease = tonumber(lease)
${QUEUE}
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, tonumber(redis.call('GET', KEYS[2]))}
end
local now = now_ms()
local member = ARGV[1] .. ':' .. ARGV[2]
-- Held by readers that have all gone (crashed): free.
if owner == '~r' and readers_alive(KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  owner = false
end
if not owner then
  local head = live_head(KEYS[3], KEYS[4], now)
  if not head or head == member then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    if head then
      redis.call('LPOP', KEYS[3])
      redis.call('ZREM', KEYS[4], member)
    end
    return {1, next_fence(KEYS[2])}
  end
  grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], lease, sharded)
end
if enqueue == '1' then
  if redis.call('ZADD', KEYS[4], now + lease, member) == 1 then
    redis.call('RPUSH', KEYS[3], member)
  end
  redis.call('PEXPIRE', KEYS[3], lease)
  redis.call('PEXPIRE', KEYS[4], lease)
end
return {0, redis.call('PTTL', KEYS[1])}
`;

/**
 * A replica cannot say a lock is not ours: during a failover the old master, demoted and
 * resyncing, answers with an empty or stale dataset. So before reporting "not the owner",
 * scripts check that they run on a master, and otherwise fail like any transient error
 * (the client retries on the new master until the lease deadline).
 */
const ON_REPLICA = `
local function on_replica()
  if string.find(redis.call('INFO', 'replication'), 'role:slave', 1, true) then
    return redis.error_reply('READONLY this node is a replica: lock ownership cannot be checked here')
  end
end
`;

/**
 * What a renew script reports for each lock: renewed; held by another token; gone (no such key:
 * it expired, or a node restarted empty); or, for a key that is not a declared key of the call,
 * not served by this node (its slot is migrating or moved: the client's slot map is stale).
 */
export const RENEWED = 1;
export const NOT_OURS = 0;
export const GONE = 2;
export const ELSEWHERE = 3;

/** KEYS: lock. ARGV: owner token, ttl. Returns RENEWED, NOT_OURS or GONE. */
const RENEW = `${ON_REPLICA}
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return on_replica() or (owner and 0 or 2)
`;

/**
 * The loop shared by the batch renew scripts: `n` locks, the i-th named by `key(i)`, its token
 * and ttl at ARGV[offset + 2i - 1] and ARGV[offset + 2i]. One code per lock (see RENEWED).
 * `guarded`: the keys are not all declared, so reading one this node does not serve raises an
 * error; it is caught and reported as ELSEWHERE for that lock alone, instead of failing the call.
 * Renewing adds no memory (PEXPIRE of a key that already has an expiry).
 */
const RENEW_LOOP = `${ON_REPLICA}
local function renew_all(n, key, offset, guarded)
  local results = {}
  local refused = false
  for i = 1, n do
    local owner
    if guarded then
      owner = redis.pcall('GET', key(i))
    else
      owner = redis.call('GET', key(i))
    end
    if type(owner) == 'table' and owner.err then
      results[i] = 3
    elseif owner == ARGV[offset + 2 * i - 1] then
      results[i] = redis.call('PEXPIRE', key(i), ARGV[offset + 2 * i])
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
 * KEYS: lock, fence, queue, waiters, release channel (declared as a key so that it is routed
 * and ACL-checked with the lock). ARGV: owner token, settings (see QUEUE).
 * Returns `{0}` when not the owner. Otherwise deletes the lock and, when someone waits, hands
 * it to the waiter whose turn it is: `{1, token, fencingToken}` of that waiter, else `{1}`.
 * With nobody waiting (no queue key) that is GET + DEL + EXISTS, and the queue functions are
 * not defined at all.
 */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  ${ON_REPLICA}
  return on_replica() or {0}
end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[3]) == 0 then return {1} end
local fence_retention, lease, sharded = string.match(ARGV[2], '^(%d+):(%d+):(%d)$')
${QUEUE}
local granted = grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(lease), sharded)
if granted then return {1, granted[1], granted[2]} end
return {1}
`;

/**
 * A waiter gives up. KEYS: lock, fence, queue, waiters, channel. ARGV: its token, its ttl,
 * settings (see QUEUE). A lock handed to it meanwhile, or a free lock, goes to the next waiter.
 */
const LEAVE = `
local fence_retention, lease, sharded = string.match(ARGV[3], '^(%d+):(%d+):(%d)$')
${QUEUE}
local member = ARGV[1] .. ':' .. ARGV[2]
redis.call('LREM', KEYS[3], 1, member)
redis.call('ZREM', KEYS[4], member)
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then redis.call('DEL', KEYS[1]) end
if owner == '~r' and readers_alive(KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  owner = false
end
if owner == ARGV[1] or not owner then
  grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(lease), sharded)
elseif owner == '~r' then
  -- A waiting writer that gives up may have been all that held back the readers behind it.
  grant_readers(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(lease), sharded)
end
return 1
`;

/**
 * Quorum mode: raises a node's fencing counter to at least ARGV[1]. KEYS: fence. ARGV[2]: fence
 * retention (ms, '0' for none), which the raised counter keeps. Every later majority shares a
 * node with this one, so its next token is higher than the one handed out.
 */
const FENCE_FLOOR = `
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
 * A lock whose slot this node no longer serves (resharding, stale slot map) comes back as
 * ELSEWHERE and is renewed on its own by the client. `allow-oom`: a script with flags is
 * otherwise refused whole under a full `maxmemory`, although a renewal adds no memory.
 */
const RENEW_NODE = `#!lua flags=allow-cross-slot-keys,allow-oom
${RENEW_LOOP}
local n = tonumber(ARGV[1])
return renew_all(n, function(i) return i == 1 and KEYS[1] or ARGV[i] end, n, true)
`;

const COMMANDS = {
  renew: { name: 'nestjsRedisLockRenew', numberOfKeys: 1, lua: RENEW },
  renewMany: { name: 'nestjsRedisLockRenewMany', numberOfKeys: null, lua: RENEW_MANY },
  renewNode: { name: 'nestjsRedisLockRenewNode', numberOfKeys: 1, lua: RENEW_NODE },
  leave: { name: 'nestjsRedisLockLeave', numberOfKeys: 5, lua: LEAVE },
  fenceFloor: { name: 'nestjsRedisLockFenceFloor', numberOfKeys: 1, lua: FENCE_FLOOR },
} as const;

type ScriptCall<R> = (...args: (string | number)[]) => Promise<R>;

/** A script sent as plain EVALSHA (see `LockScripts.hot`). */
interface HotScript {
  lua: string;
  sha: string;
}

const hotScript = (lua: string): HotScript => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

/** Acquire and release: every lock runs them, so they skip ioredis' script wrapper. */
const HOT = { acquire: hotScript(ACQUIRE), release: hotScript(RELEASE) } as const;

type Eval = (script: string, numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>;

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

/** A lock a release handed to a waiter. */
export interface Grant {
  token: string;
  fencingToken: number;
}

/** Outcome of a release: whether we held it, and the waiter it was handed to. */
export interface ReleaseReply {
  released: boolean;
  grant?: Grant;
}

/**
 * The lock protocol over one client. Scripts are registered with `defineCommand`, which sends
 * EVALSHA and falls back to EVAL when the server answers NOSCRIPT. The commands are reached
 * through this class, typed here, instead of augmenting ioredis' types for every user.
 */
export class LockScripts implements LockStore {
  readonly queues = true;
  private readonly calls: { [K in keyof typeof COMMANDS]: ScriptCall<unknown> };
  /**
   * The client's own `keyPrefix`: ioredis adds it to every key of a script call (it reads the
   * key count of EVALSHA), and cluster slots must be computed with it.
   */
  readonly keyPrefix: string;
  /** Redis Cluster: a script's keys must share one slot. */
  readonly isCluster: boolean;

  /** The module's `fenceRetention` as the scripts take it: '0' keeps fencing counters forever. */
  private readonly fenceRetention: string;

  /** `fenceRetention`: ms after its last token until an idle fencing counter expires; 0 never. */
  constructor(
    readonly client: RedisClient,
    fenceRetention = 0,
  ) {
    this.fenceRetention = String(fenceRetention);
    this.keyPrefix = clientKeyPrefix(client);
    this.isCluster = (client as { isCluster?: boolean }).isCluster === true;
    for (const { name, numberOfKeys, lua } of Object.values(COMMANDS)) {
      client.defineCommand(name, numberOfKeys === null ? { lua } : { numberOfKeys, lua });
    }
    const commands = client as unknown as Record<string, ScriptCall<unknown>>;
    const bind = (name: string): ScriptCall<unknown> => commands[name]!.bind(client);
    this.calls = {
      renew: bind(COMMANDS.renew.name),
      renewMany: bind(COMMANDS.renewMany.name),
      renewNode: bind(COMMANDS.renewNode.name),
      leave: bind(COMMANDS.leave.name),
      fenceFloor: bind(COMMANDS.fenceFloor.name),
    };
  }

  private semaphoreScripts?: SemaphoreScripts;

  /** The counting semaphore's scripts over the same client, with the same settings (see `semaphore/`). */
  get semaphores(): SemaphoreScripts {
    return (this.semaphoreScripts ??= new SemaphoreScripts(this.client, async (lease) => this.settings(lease, this.knownShardFlag ?? (await this.shardFlag()))));
  }

  private readScripts?: ReadScripts;

  /** The read side of read-write locks over the same client (see `rwlock/`). */
  get readers(): ReadScripts {
    return (this.readScripts ??= new ReadScripts(this.client, async (lease) => this.settings(lease, this.knownShardFlag ?? (await this.shardFlag()))));
  }

  async acquire(keys: ScriptKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<AcquireReply> {
    const settings = this.settings(waiterLease, this.knownShardFlag ?? (await this.shardFlag())) + (enqueue ? ':1' : ':0');
    const [ok, value] = (await this.hot(HOT.acquire, keys, token, ttl, settings)) as [number, number];
    return ok === 1 ? { acquired: true, fencingToken: value } : { acquired: false, pttl: value };
  }

  async renew(lock: string, token: string, ttl: number): Promise<RenewalOutcome> {
    return (await this.renewCode(lock, token, ttl)) === RENEWED;
  }

  /** RENEWED, NOT_OURS or GONE (quorum mode tells a node that lost the lock from a rival's). */
  async renewCode(lock: string, token: string, ttl: number): Promise<number> {
    return (await this.calls.renew(lock, token, ttl)) as number;
  }

  /** Quorum mode: puts a lock back on a node that lost it (restarted empty), only if nobody holds it there. */
  async restore(lock: string, token: string, ttl: number): Promise<boolean> {
    return (await this.client.set(lock, token, 'PX', ttl, 'NX')) === 'OK';
  }

  /** `args` holds token and ttl of each lock in turn. */
  async renewMany(locks: string[], args: (string | number)[]): Promise<number[]> {
    return (await this.calls.renewMany(locks.length, ...locks, ...args)) as number[];
  }

  async release(keys: ScriptKeys, token: string, waiterLease: number): Promise<ReleaseReply> {
    const settings = this.settings(waiterLease, this.knownShardFlag ?? (await this.shardFlag()));
    const [ok, next, fencingToken] = (await this.hot(HOT.release, keys, token, settings)) as [number, string?, number?];
    if (ok !== 1) return { released: false };
    return { released: true, grant: next === undefined ? undefined : { token: next, fencingToken: fencingToken! } };
  }

  async leave(keys: ScriptKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    await this.calls.leave(keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, token, ttl, this.settings(waiterLease, this.knownShardFlag ?? (await this.shardFlag())));
  }

  /**
   * Renews many locks, one script call per 10,000 locks at most. On Redis Cluster, where a
   * script's keys must share one slot, the calls go per node on Redis 7 (the script is flagged
   * `allow-cross-slot-keys`), else per slot; ioredis sends the calls for one node back to back.
   * Each call is its own part: a node that fails costs only its own locks a renewal.
   */
  renewBatch(requests: RenewalRequest[]): RenewalPart[] {
    return this.codeParts(requests).map(({ indexes, codes }) => ({
      indexes,
      outcomes: codes.then((replies) => replies.map((code) => (code === RENEWED ? true : code === ELSEWHERE ? undefined : false))),
    }));
  }

  /** Renews `requests` and resolves each one's code (RENEWED, NOT_OURS, GONE, ELSEWHERE); rejects if a call failed. */
  async renewCodes(requests: RenewalRequest[]): Promise<number[]> {
    const codes: number[] = new Array(requests.length);
    await Promise.all(
      this.codeParts(requests).map(async (part) => {
        const replies = await part.codes;
        part.indexes.forEach((index, i) => (codes[index] = replies[i]!));
      }),
    );
    return codes;
  }

  private codeParts(requests: RenewalRequest[]): { indexes: number[]; codes: Promise<number[]> }[] {
    let groups: number[][];
    let perNode = false;
    if (!this.isCluster) {
      groups = byCount(requests.length);
    } else {
      // Until the servers' version is known, per slot: right on any version, only more calls.
      perNode = this.redis7 === true;
      if (this.redis7 === undefined) this.clusterOnRedis7().catch(() => undefined);
      groups = bySlot(requests, this.keyPrefix, perNode ? (this.client as Cluster).slots : undefined);
    }
    return groups.map((indexes) => {
      const keys: string[] = new Array(indexes.length);
      const args: (string | number)[] = new Array(indexes.length * 2);
      indexes.forEach((index, i) => {
        const request = requests[index]!;
        keys[i] = request.lockKey;
        args[2 * i] = request.token;
        args[2 * i + 1] = request.ttl;
      });
      const codes = perNode ? this.renewNode(keys, args).then((replies) => this.renewElsewhere(indexes, replies, requests)) : this.renewMany(keys, args);
      return { indexes, codes };
    });
  }

  /**
   * Locks a per-node call found on a node that does not serve their slot (a slot migrating or
   * moved since the client's slot map was read) are renewed one by one, as declared keys:
   * ioredis then follows Redis' ASK and MOVED redirections, and refreshes its slot map.
   */
  private async renewElsewhere(indexes: number[], replies: number[], requests: RenewalRequest[]): Promise<number[]> {
    const retries: Promise<void>[] = [];
    replies.forEach((code, i) => {
      if (code !== ELSEWHERE) return;
      const { lockKey, token, ttl } = requests[indexes[i]!]!;
      retries.push(this.renewCode(lockKey, token, ttl).then((retried) => void (replies[i] = retried), () => undefined));
    });
    await Promise.all(retries);
    return replies;
  }

  /** See RENEW_NODE. ioredis prefixes the declared first key only; the others get it here. */
  private async renewNode(locks: string[], args: (string | number)[]): Promise<number[]> {
    const others = locks.slice(1).map((lock) => this.keyPrefix + lock);
    return (await this.calls.renewNode(locks[0]!, locks.length, ...others, ...args)) as number[];
  }

  /**
   * Whether release messages go over sharded pub/sub (SPUBLISH / SSUBSCRIBE): on a Redis 7
   * Cluster, where a plain PUBLISH would be broadcast to every node. The scripts and the
   * release notifier both ask here, and the answer, once known, never changes, so the channel
   * a script publishes on is the one waiters listen to.
   */
  shardedPubSub(): Promise<boolean> {
    return this.isCluster ? this.clusterOnRedis7() : Promise.resolve(false);
  }

  /** Known once the cluster's versions are: read directly then, so that a call costs no extra await. */
  private get knownShardFlag(): '0' | '1' | undefined {
    if (!this.isCluster) return '0';
    return this.redis7 === undefined ? undefined : this.redis7 ? '1' : '0';
  }
  /**
   * Sends a 5-key script as a plain EVALSHA, and EVAL when the server has not cached it yet
   * (it is cached from then on). ioredis' `defineCommand` wrapper does the same, but copies the
   * arguments twice and adds a promise and a closure per call: about 0.3 us of CPU per call.
   * ioredis still routes the command by its first key on a Cluster and adds the `keyPrefix`.
   */
  private async hot(script: HotScript, keys: ScriptKeys, ...args: (string | number)[]): Promise<unknown> {
    try {
      return await (this.client.evalsha as Eval)(script.sha, 5, keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return (this.client.eval as Eval)(script.lua, 5, keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, ...args);
    }
  }

  /** The scripts' settings argument: `<fence retention>:<waiter lease>:<sharded>` (see QUEUE). */
  private settings(waiterLease: number, sharded: '0' | '1'): string {
    return `${this.fenceRetention}:${waiterLease}:${sharded}`;
  }

  private shardFlag(): '0' | '1' | Promise<'0' | '1'> {
    if (!this.isCluster) return '0';
    if (this.redis7 !== undefined) return this.redis7 ? '1' : '0';
    return this.clusterOnRedis7().then((redis7) => (redis7 ? '1' : '0'));
  }

  /** Known once every master answered; never guessed (a guess could split publishers from subscribers). */
  private redis7?: boolean;
  private asking?: Promise<boolean>;

  /**
   * Whether every master runs Redis 7 or later (script flags, sharded pub/sub). A failed check
   * is not remembered: the caller fails like on any Redis error, and the next call asks again.
   */
  private clusterOnRedis7(): Promise<boolean> {
    if (this.redis7 !== undefined) return Promise.resolve(this.redis7);
    const cluster = this.client as Cluster;
    const masters = async (): Promise<Redis[]> => {
      // Not connected yet: any command waits for the slot map (or fails like any command).
      if (cluster.nodes('master').length === 0) await cluster.ping();
      return cluster.nodes('master');
    };
    this.asking ??= masters()
      .then((nodes) => Promise.all(nodes.map(async (node) => Number(/redis_version:(\d+)/.exec(await node.info('server'))?.[1] ?? 0) >= 7)))
      .then((versions) => {
        if (versions.length === 0) throw new Error('no Redis Cluster master is known yet');
        return (this.redis7 = versions.every(Boolean));
      })
      .finally(() => (this.asking = undefined));
    return this.asking;
  }

  async fenceFloor(fence: string, floor: number): Promise<void> {
    await this.calls.fenceFloor(fence, floor, this.fenceRetention);
  }

  async exists(lock: string): Promise<boolean> {
    return (await this.client.exists(lock)) === 1;
  }

  /**
   * Plain reads, pipelined (the keys share one cluster slot): no script, so an ACL that only
   * allows reads is enough for monitoring. Not atomic; a snapshot anyway.
   */
  async inspect(keys: ScriptKeys): Promise<LockSnapshot> {
    const replies = await this.client.pipeline().get(keys.lock).pttl(keys.lock).get(keys.fence).zcard(keys.waiters).exec();
    const values = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const [owner, pttl, fence, waiters] = values as [string | null, number, string | null, number];
    return { owner, pttl, fencingToken: fence === null ? null : Number(fence), waiters };
  }
}

/** The `keyPrefix` ioredis adds to the keys (not the channels) of this client's commands. */
export function clientKeyPrefix(client: RedisClient): string {
  const options = (client as { options?: { keyPrefix?: string; redisOptions?: { keyPrefix?: string } } }).options;
  return options?.keyPrefix ?? options?.redisOptions?.keyPrefix ?? '';
}

/** Locks per script call: bounds the arguments of one call. */
const BATCH_SIZE = 10_000;

function byCount(count: number): number[][] {
  const groups: number[][] = [];
  for (let from = 0; from < count; from += BATCH_SIZE) {
    groups.push(Array.from({ length: Math.min(BATCH_SIZE, count - from) }, (_, i) => from + i));
  }
  return groups;
}

/**
 * Groups by slot, or by the node that serves the slot when `slots` (the cluster's map) is
 * given; a group never holds more than BATCH_SIZE locks.
 */
function bySlot(requests: RenewalRequest[], keyPrefix: string, slots?: string[][]): number[][] {
  const open = new Map<number | string, number[]>();
  const groups: number[][] = [];
  requests.forEach((request, index) => {
    const slot = clusterSlot(keyPrefix + request.lockKey);
    const groupKey = slots?.[slot]?.[0] ?? slot;
    let group = open.get(groupKey);
    if (group === undefined || group.length >= BATCH_SIZE) {
      open.set(groupKey, (group = []));
      groups.push(group);
    }
    group.push(index);
  });
  return groups;
}
