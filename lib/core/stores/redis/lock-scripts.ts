import { createHash } from 'node:crypto';
import { clusterSlot } from '../../keys/cluster-slot.js';
import { driverFor } from './drivers/driver-for.js';
import type { RedisClient } from './drivers/redis-client.js';
import { isNoScript, type BareScriptCall, type RedisDriver, type RunScript, type ScriptCall } from './drivers/redis-driver.js';
import { ELSEWHERE, RENEWED, type ScriptName } from './lock-lua.js';
import { LOCK_HELD } from '../../rwlock/read-lua.js';
import { ReadScripts } from '../../rwlock/read-scripts.js';
import { READ_HELD } from '../../rwlock/read-keys.js';
import { SemaphoreScripts } from '../../semaphore/semaphore-scripts.js';
import type { AcquireReply, LockSnapshot, LockStore, ReleaseReply, RenewalOutcome, RenewalPart, RenewalRequest, ScriptKeys } from '../lock-store.js';

export { ELSEWHERE, GONE, NOT_OURS, RENEWED } from './lock-lua.js';

const HELD_SCRIPT = { lua: LOCK_HELD, sha: createHash('sha1').update(LOCK_HELD).digest('hex') };

/**
 * The lock protocol over one client, through its driver (see `drivers/`): scripts are sent as
 * EVALSHA, falling back to EVAL when the server answers NOSCRIPT (ioredis' `defineCommand`, or
 * the same done by the node-redis driver). The Lua lives in `lock-lua.ts`.
 */
export class LockScripts implements LockStore {
  readonly queues = true;
  private readonly calls: Record<ScriptName, ScriptCall>;
  private readonly driver: RedisDriver;
  /**
   * The client's own key prefix: its library adds it to every declared key of a script call,
   * and cluster slots must be computed with it.
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
    this.driver = driverFor(client);
    this.keyPrefix = this.driver.keyPrefix;
    this.isCluster = this.driver.isCluster;
    this.calls = this.driver.scripts();
    this.acquireScript = this.driver.bareScript(this.isCluster ? 'acquire' : 'acquireOneKey');
    this.releaseScript = this.driver.bareScript(this.isCluster ? 'release' : 'releaseOneKey');
  }

  /** The two scripts every lock runs, with five declared keys on a Cluster and one elsewhere. */
  private readonly acquireScript: BareScriptCall;
  private readonly releaseScript: BareScriptCall;

  private semaphoreScripts?: SemaphoreScripts;

  /** The counting semaphore's scripts over the same client, with the same settings (see `semaphore/`). */
  get semaphores(): SemaphoreScripts {
    return (this.semaphoreScripts ??= new SemaphoreScripts(this.runScript, async (lease) => this.settings(lease, this.knownShardFlag ?? (await this.shardFlag()))));
  }

  private readScripts?: ReadScripts;

  /** The read side of read-write locks over the same client (see `rwlock/`). */
  get readers(): ReadScripts {
    return (this.readScripts ??= new ReadScripts(this.runScript, async (lease) => this.settings(lease, this.knownShardFlag ?? (await this.shardFlag()))));
  }

  private readonly runScript: RunScript = (script, keys, args) => this.driver.evalScript(script, keys, args);

  // acquire() and release() run for every lock: plain functions with one `then`, not async ones
  // (each async layer costs two promises, three under an enabled AsyncLocalStorage).
  acquire(keys: ScriptKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<AcquireReply> {
    const sharded = this.knownShardFlag;
    if (sharded === undefined) return Promise.resolve(this.shardFlag()).then((flag) => this.sendAcquire(keys, token, ttl, enqueue, waiterLease, flag));
    return this.sendAcquire(keys, token, ttl, enqueue, waiterLease, sharded);
  }

  private sendAcquire(keys: ScriptKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number, sharded: '0' | '1'): Promise<AcquireReply> {
    const settings = this.settings(waiterLease, sharded, enqueue ? ':1' : ':0');
    // Outside a Cluster the script derives the other four names from the lock's (see lock-lua.ts).
    const args = this.isCluster ? [keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, token, ttl, settings] : [keys.lock, token, ttl, settings];
    return sendBare(this.acquireScript, args, toAcquireReply);
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
    return this.driver.setIfAbsent(lock, token, ttl);
  }

  /** `args` holds token and ttl of each lock in turn. */
  async renewMany(locks: string[], args: (string | number)[]): Promise<number[]> {
    return (await this.calls.renewMany(locks.length, ...locks, ...args)) as number[];
  }

  release(keys: ScriptKeys, token: string, waiterLease: number): Promise<ReleaseReply> {
    const sharded = this.knownShardFlag;
    if (sharded === undefined) return Promise.resolve(this.shardFlag()).then((flag) => this.sendRelease(keys, token, waiterLease, flag));
    return this.sendRelease(keys, token, waiterLease, sharded);
  }

  private sendRelease(keys: ScriptKeys, token: string, waiterLease: number, sharded: '0' | '1'): Promise<ReleaseReply> {
    const settings = this.settings(waiterLease, sharded);
    const args = this.isCluster ? [keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, token, settings] : [keys.lock, token, settings];
    return sendBare(this.releaseScript, args, toReleaseReply);
  }

  async leave(keys: ScriptKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    await this.calls.leave(keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, token, ttl, this.settings(waiterLease, this.knownShardFlag ?? (await this.shardFlag())));
  }

  /**
   * Renews many locks, one script call per 10,000 locks at most. On Redis Cluster, where a
   * script's keys must share one slot, the calls go per node on Redis 7 (the script is flagged
   * `allow-cross-slot-keys`), else per slot; the client sends the calls for one node back to back.
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
      groups = bySlot(requests, this.keyPrefix, perNode ? (slot) => this.driver.slotOwner(slot) : undefined);
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
   * the client then follows Redis' ASK and MOVED redirections, and refreshes its slot map.
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

  /** See RENEW_NODE. The client prefixes the declared first key only; the others get it here. */
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

  /** The scripts' settings argument: `<fence retention>:<waiter lease>:<sharded>` (see QUEUE). */
  private settings(waiterLease: number, sharded: '0' | '1', suffix: (typeof SETTINGS_SUFFIXES)[number] = ''): string {
    // The same few strings for every call: built once, not twice per lock.
    let variants = this.settingsByLease.get(waiterLease);
    if (variants === undefined) {
      variants = [];
      this.settingsByLease.set(waiterLease, variants);
    }
    const index = (sharded === '1' ? SETTINGS_SUFFIXES.length : 0) + SETTINGS_SUFFIXES.indexOf(suffix);
    return (variants[index] ??= `${this.fenceRetention}:${waiterLease}:${sharded}${suffix}`);
  }

  private readonly settingsByLease = new Map<number, string[]>();

  /** Known once the cluster's versions are: read directly then, so that a call costs no extra await. */
  private get knownShardFlag(): '0' | '1' | undefined {
    if (!this.isCluster) return '0';
    return this.redis7 === undefined ? undefined : this.redis7 ? '1' : '0';
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
    this.asking ??= this.driver
      .masters()
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
    return (await this.runScript(HELD_SCRIPT, [lock, `${lock}:readers`], [])) === 1;
  }

  /**
   * Plain reads, pipelined (the keys share one cluster slot): no script, so an ACL that only
   * allows reads is enough for monitoring. Not atomic; a snapshot anyway.
   */
  async inspect(keys: ScriptKeys): Promise<LockSnapshot> {
    const [owner, pttl, fence, waiters] = await this.driver.readLock(keys.lock, keys.fence, keys.waiters);
    // Held by readers: only while one of them is still there.
    const held = owner !== READ_HELD || (await this.exists(keys.lock));
    return { owner: held ? owner : null, pttl, fencingToken: fence === null ? null : Number(fence), waiters };
  }
}

/** The key prefix the client adds to the keys (not the channels) of its commands. */
export function clientKeyPrefix(client: RedisClient): string {
  return driverFor(client).keyPrefix;
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
function bySlot(requests: RenewalRequest[], keyPrefix: string, slotOwner?: (slot: number) => string | undefined): number[][] {
  const open = new Map<number | string, number[]>();
  const groups: number[][] = [];
  requests.forEach((request, index) => {
    const slot = clusterSlot(keyPrefix + request.lockKey);
    const groupKey = slotOwner?.(slot) ?? slot;
    let group = open.get(groupKey);
    if (group === undefined || group.length >= BATCH_SIZE) {
      open.set(groupKey, (group = []));
      groups.push(group);
    }
    group.push(index);
  });
  return groups;
}

/** One call of a bare script, parsed: EVALSHA, and EVAL again on NOSCRIPT, under one `then`. */
function sendBare<T>(script: BareScriptCall, args: (string | number)[], parse: (reply: unknown) => T): Promise<T> {
  return script.send(...args).then(parse, (error: unknown) => {
    if (!isNoScript(error)) throw error;
    return script.resend(...args).then(parse);
  });
}

/** What may follow the settings: nothing, or acquire's "join the queue on failure" flag. */
const SETTINGS_SUFFIXES = ['', ':0', ':1'] as const;

function toAcquireReply(reply: unknown): AcquireReply {
  const [ok, value, fence] = reply as [number, number, number?];
  if (ok === 1) return { acquired: true, fencingToken: value };
  return fence === undefined ? { acquired: false, pttl: value } : { acquired: false, pttl: value, fence };
}

function toReleaseReply(reply: unknown): ReleaseReply {
  const [ok, next, fencingToken] = reply as [number, string?, number?];
  if (ok !== 1) return { released: false };
  return { released: true, grant: next === undefined ? undefined : { token: next, fencingToken: fencingToken! } };
}
