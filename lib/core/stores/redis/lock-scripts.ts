import { createHash } from 'node:crypto';
import { clusterSlot } from '../../keys/cluster-slot.js';
import { driverFor } from './drivers/driver-for.js';
import type { RedisClient } from './drivers/redis-client.js';
import { flatPairs, isNoScript, scriptError, throwScriptError, type BareScriptCall, type LuaScript, type ReadCommand, type RedisDriver, type RunScript, type ScriptCall } from './drivers/redis-driver.js';
import { COMMANDS, ELSEWHERE, GONE, HAND_ON, KEEP_FENCE, RENEWED, type ScriptName } from './lock-lua.js';
import { LOCK_HELD } from '../../rwlock/read-lua.js';
import { ReadScripts } from '../../rwlock/read-scripts.js';
import { READ_HELD } from '../../rwlock/read-keys.js';
import { longestLease } from '../../engine/lease-left.js';
import { ForeignDataRead, holdsForeignData } from '../../engine/store-failure.js';
import { SemaphoreScripts } from '../../semaphore/semaphore-scripts.js';
import { inspectSemaphoreInRedis, type SemaphoreSnapshot } from '../../semaphore/semaphore-inspect.js';
import { LOCK_KEY_SUFFIXES, type LockRedisKeys } from '../../keys/lock-key.js';
import type { SemaphoreStore } from '../../semaphore/semaphore-store.js';
import { SEMAPHORE_SUFFIXES, semaphoreKeys } from '../../semaphore/semaphore-keys.js';
import { WAITER_LEASE_MS } from '../../engine/waiter-timing.js';
import type { ReadStore } from '../../rwlock/read-store.js';
import { InvalidLockOptionsError } from '../../../errors/invalid-lock-options.error.js';
import type { ReplicaWait } from '../../options/wait-for-replicas.js';
import { IoRedisDriver } from './drivers/ioredis-driver.js';
import type { Redis } from 'ioredis';
import { ReplicaWaiter } from './replica-wait.js';
import { RenewalRefusal, type AcquireReply, type Enqueue, type LockSnapshot, type LockStore, type ParkRequest, type ReleaseReply, type RenewalOutcome, type RenewalPart, type RenewalRequest, type ScriptKeys } from '../lock-store.js';
import { toAcquireReply, toReleaseReply } from '../lock-replies.js';

export { ELSEWHERE, GONE, NOT_OURS, RENEWED } from './lock-lua.js';

const HELD_SCRIPT = { lua: LOCK_HELD, sha: createHash('sha1').update(LOCK_HELD).digest('hex') };
const KEEP_FENCE_SCRIPT = { lua: KEEP_FENCE, sha: createHash('sha1').update(KEEP_FENCE).digest('hex') };

/**
 * The lock protocol over one client, through its driver (see `drivers/`): scripts are sent as
 * EVALSHA, falling back to EVAL when the server answers NOSCRIPT (until the store closes, see
 * `close`). The Lua lives in `lock-lua.ts`.
 */
export class LockScripts implements LockStore {
  readonly queues = true;
  readonly barges = true;
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

  /**
   * `fenceRetention`: ms after its last token until an idle fencing counter expires; 0 never.
   * `replicaWait`: the module's `waitForReplicas` (see `ReplicaWaiter`).
   */
  constructor(
    readonly client: RedisClient,
    fenceRetention = 0,
    replicaWait?: ReplicaWait,
  ) {
    this.fenceRetention = String(fenceRetention);
    this.driver = driverFor(client);
    this.keyPrefix = this.driver.keyPrefix;
    this.isCluster = this.driver.isCluster;
    this.calls = guardedScripts(this.driver, this.open);
    this.acquireScript = this.driver.bareScript(this.isCluster ? 'acquire' : 'acquireOneKey');
    this.releaseScript = this.driver.bareScript(this.isCluster ? 'release' : 'releaseOneKey');
    if (replicaWait !== undefined) {
      if (!(this.driver instanceof IoRedisDriver) || this.isCluster) {
        throw new InvalidLockOptionsError(
          'waitForReplicas',
          replicaWait,
          'left out with this connection: it needs one ioredis connection to a master (a URL, ioredis options with or without Sentinel, or an ioredis or iovalkey Redis client), not yet a Cluster, a node-redis client or a Valkey GLIDE client',
        );
      }
      this.replicaWaiter = new ReplicaWaiter(this.driver.client as Redis, replicaWait);
      this.replicatedAcquire = this.replicaWaiter.driver.bareScript('acquireOneKey');
    }
  }

  /** The two scripts every lock runs, with five declared keys on a Cluster and one elsewhere. */
  private readonly acquireScript: BareScriptCall;
  private readonly releaseScript: BareScriptCall;

  /**
   * With `waitForReplicas`: acquisitions go out on their own connection and wait for replicas
   * there, as do the fenced writes and claims of the module's `FencedRedis`.
   */
  readonly replicaWaiter?: ReplicaWaiter;
  private readonly replicatedAcquire?: BareScriptCall;

  /** A grant is handed out only once an acquire call confirmed it, which waits for the replicas too. */
  get confirmsGrants(): boolean {
    return this.replicaWaiter !== undefined;
  }

  private semaphoreStore?: SemaphoreStore;

  /** The counting semaphore's scripts over the same client, with the same settings (see `semaphore/`). */
  get semaphores(): SemaphoreStore {
    if (this.semaphoreStore !== undefined) return this.semaphoreStore;
    const settings = (lease: number) => this.settings(lease, this.shardFlag);
    const deleteField = (key: string, field: string) => this.driver.deleteField(key, field);
    const closed = () => this.closed;
    const scripts = new SemaphoreScripts(this.runScript, settings, this.isCluster, deleteField, closed);
    const waiter = this.replicaWaiter;
    if (waiter === undefined) return (this.semaphoreStore = scripts);
    const replicated = new SemaphoreScripts((script, keys, args) => waiter.driver.evalScript(script, keys, args), settings, this.isCluster, deleteField, closed);
    return (this.semaphoreStore = {
      // LockNotReplicatedError names the semaphore's lock key, not the holder's own permit key
      // (which carries its owner token: the key of no lock a caller knows).
      acquire: (keys, token, ttl, enqueue, lease) =>
        waiter.acquire(keys.semaphore.holders.slice(0, -SEMAPHORE_SUFFIXES.holders.length), () => replicated.acquire(keys, token, ttl, enqueue, lease), () => scripts.release(keys, token, lease)),
      release: (keys, token, lease) => scripts.release(keys, token, lease),
      leave: (keys, token, ttl, lease) => scripts.leave(keys, token, ttl, lease),
    });
  }

  private readStore?: ReadStore;

  /** The read side of read-write locks over the same client (see `rwlock/`). */
  get readers(): ReadStore {
    if (this.readStore !== undefined) return this.readStore;
    const settings = async (lease: number) => this.settings(lease, this.shardFlag);
    const scripts = new ReadScripts(this.runScript, settings);
    const waiter = this.replicaWaiter;
    if (waiter === undefined) return (this.readStore = scripts);
    const replicated = new ReadScripts((script, keys, args) => waiter.driver.evalScript(script, keys, args), settings);
    return (this.readStore = {
      // The read lock's key, as for the semaphore's above, not the reader's own key.
      acquire: (keys, token, ttl, enqueue, lease) => waiter.acquire(keys.read.shared, () => replicated.acquire(keys, token, ttl, enqueue, lease), () => scripts.release(keys, token, lease)),
      release: (keys, token, lease) => scripts.release(keys, token, lease),
      leave: (keys, token, ttl, lease) => scripts.leave(keys, token, ttl, lease),
    });
  }

  /** The application starts: the connection `waitForReplicas` opened, if any, connects (see `ReplicaWaiter`). */
  start(): void {
    this.replicaWaiter?.connect();
  }

  /**
   * Closes the connection `waitForReplicas` opened, if any (the client itself is the caller's).
   * A script sent before that and answered NOSCRIPT after it (a frozen server that resumes) is
   * not sent again as EVAL: the application has closed, and a client handed in stays open for
   * its owner alone. What it was sent for ends with its lease. Nor is the release script a
   * semaphore's holder alone falls back on when its `HDEL` is answered after it (see
   * `SemaphoreScripts.release`).
   */
  close(): void {
    this.closed = true;
    this.replicaWaiter?.close();
  }

  private closed = false;

  /** Whether a NOSCRIPT answer may still be followed by the script's EVAL (see `close`). */
  private readonly open = (): boolean => !this.closed;

  /** Whether releases go as EVAL at once (see `shuttingDown`). */
  private whole = false;

  /**
   * Shutdown begins: releases and give-backs go as EVAL from now on. A server that has not
   * cached a script (restarted, or this process never released there) answers EVALSHA with
   * NOSCRIPT, and the EVAL that answer calls for would never be sent once the connection is
   * closed: a node slow to answer then (frozen, busy) would keep the lock for its whole ttl.
   */
  shuttingDown(): void {
    this.whole = true;
  }

  private readonly runScript: RunScript = (script, keys, args) => this.driver.evalScript(script, keys, args, this.whole, this.open);

  // acquire() and release() run for every lock: plain functions with one `then`, not async ones
  // (each async layer costs two promises, three under an enabled AsyncLocalStorage).
  acquire(keys: ScriptKeys, token: string, ttl: number, enqueue: Enqueue, waiterLease: number): Promise<AcquireReply> {
    // Learnt before the first renewal, without holding this call up (see `perMasterRenewals`).
    if (this.isCluster && this.redis7 === undefined) this.learnVersions();
    const settings = this.settings(waiterLease, this.shardFlag, enqueue === 'barging' ? ':2' : enqueue ? ':1' : ':0');
    // Outside a Cluster the script derives the other four names from the lock's (see lock-lua.ts).
    const args = this.isCluster ? [keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, token, ttl, settings] : [keys.lock, token, ttl, settings];
    if (this.replicaWaiter !== undefined) {
      const script = this.replicatedAcquire!;
      return this.replicaWaiter.acquire(keys.lock, () => sendBare(script, args, toAcquireReply, false, this.open), () => this.release(keys, token, waiterLease));
    }
    return sendBare(this.acquireScript, args, toAcquireReply, false, this.open);
  }

  async renew(lock: string, token: string, ttl: number): Promise<RenewalOutcome> {
    const code = await this.renewCode(lock, token, ttl);
    return this.renewalOutcome(code);
  }

  /** RENEWED, NOT_OURS, GONE or ELSEWHERE (quorum mode tells a node that lost the lock from a rival's). */
  async renewCode(lock: string, token: string, ttl: number): Promise<number> {
    return this.handOnOwed((await this.calls.renew(lock, token, ttl)) as number, lock, token);
  }

  /**
   * A renew script's code for `lock`, HAND_ON made GONE: the renewal of semaphore permit `lock`
   * found it gone and dropped its holder's entry while waiters are queued, but could not hand the
   * permits that freed to them (on a Cluster, where it declares the permit key alone: see
   * SEMAPHORE_HAND_ON). The semaphore's leave script, sent for the lost holder with every key
   * declared, does: its count hands them on as a release would, rather than leave them to the
   * waiters' next poll. Not waited for: the holder hears of its loss now, and a failure leaves
   * the permits to that poll.
   */
  private handOnOwed(code: number, lock: string, token: string): number {
    if (code !== HAND_ON) return code;
    const suffix = SEMAPHORE_SUFFIXES.permit + token;
    if (!this.closed && lock.endsWith(suffix)) {
      const base = lock.slice(0, -suffix.length);
      const names = { lock: base, fence: base + LOCK_KEY_SUFFIXES.fence, queue: '', waiters: '', released: '' };
      this.semaphores.leave(semaphoreKeys(names, token, base, 0, 0), token, 0, WAITER_LEASE_MS).catch(() => undefined);
    }
    return GONE;
  }

  /** `handOnOwed` for each code of a batch, whose i-th lock and token are `locks[i]` and `args[2i]`. */
  private handOnEachOwed(codes: number[], locks: string[], args: (string | number)[]): number[] {
    codes.forEach((code, i) => {
      if (code === HAND_ON) codes[i] = this.handOnOwed(code, locks[i]!, String(args[2 * i]));
    });
    return codes;
  }

  /** Quorum mode: puts a lock back on a node that lost it (restarted empty), only if nobody holds it there. */
  async restore(lock: string, token: string, ttl: number): Promise<boolean> {
    return this.driver.setIfAbsent(lock, token, ttl);
  }

  /** `args` holds token and ttl of each lock in turn. */
  async renewMany(locks: string[], args: (string | number)[]): Promise<number[]> {
    return this.handOnEachOwed((await this.calls.renewMany(locks.length, ...locks, ...args)) as number[], locks, args);
  }

  connectionResets(): number {
    return this.driver.connectionResets?.() ?? 0;
  }

  release(keys: ScriptKeys, token: string, waiterLease: number, park?: ParkRequest): Promise<ReleaseReply> {
    const settings = this.settings(waiterLease, this.shardFlag);
    const args: (string | number)[] = this.isCluster ? [keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, token, settings] : [keys.lock, token, settings];
    if (park !== undefined) args.push(park.token, park.ttl);
    return sendBare(this.releaseScript, args, toReleaseReply, this.whole, this.open);
  }

  /** Quorum mode: the scripts of a quorum's master (see `quorum-lua.ts`), made when first used. */
  private quorumScripts?: { acquire: BareScriptCall; release: BareScriptCall };

  private get quorum(): { acquire: BareScriptCall; release: BareScriptCall } {
    return (this.quorumScripts ??= { acquire: this.driver.bareScript('quorumAcquire'), release: this.driver.bareScript('quorumRelease') });
  }

  /**
   * Quorum mode: this master's part of an acquisition; `unfenced` leaves the counter alone,
   * `seed` (ms) starts a counter this master does not have.
   * `onResent` hears of one sent again as EVAL after NOSCRIPT (this master lost its scripts), with
   * its reply: commands sent meanwhile on this connection (a release) ran before it.
   */
  quorumAcquire(lock: string, token: string, ttl: number, unfenced: boolean, seed: number, onResent?: (reply: Promise<AcquireReply>) => void): Promise<AcquireReply> {
    const script = this.quorum.acquire;
    const args = [lock, token, ttl, unfenced ? '-' : this.fenceRetention, seed];
    return script.send(...args).then(toAcquireReply, (error: unknown) => {
      if (!isNoScript(error) || this.closed) throw scriptError(error);
      const reply = script.resend(...args).then(toAcquireReply, throwScriptError);
      onResent?.(reply);
      return reply;
    });
  }

  /** Quorum mode: this master's part of a release; `whole`: sent as EVAL (see `RedisDriver.evalScript`). */
  quorumRelease(lock: string, token: string, whole = false): Promise<ReleaseReply> {
    return sendBare(this.quorum.release, [lock, token], toReleaseReply, this.whole || whole, this.open);
  }

  private leaveScript?: BareScriptCall;

  /** A waiter gives up; at shutdown sent whole, as a release is (see `shuttingDown`). */
  async leave(keys: ScriptKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    const script = (this.leaveScript ??= this.driver.bareScript('leave'));
    const args = [keys.lock, keys.fence, keys.queue, keys.waiters, keys.released, token, ttl, this.settings(waiterLease, this.shardFlag)];
    await sendBare(script, args, () => undefined, this.whole, this.open);
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
      outcomes: codes.then((replies) => replies.map((code) => this.renewalOutcome(code))),
    }));
  }

  /**
   * ELSEWHERE: a reader's or permit's guards were not found with it (see GUARDS in lock-lua.ts).
   * On a Cluster they may be on their way with a migrating slot: not known lost, the next
   * renewal asks again. On one server they are gone (evicted, deleted), others may be let in
   * beside the holder, and no renewal can renew it any more: lost now, not at its deadline.
   */
  private renewalOutcome(code: number | RenewalRefusal): RenewalOutcome {
    if (code instanceof RenewalRefusal) return code;
    return code === RENEWED ? true : code === ELSEWHERE && this.isCluster ? undefined : false;
  }

  /**
   * Renews `requests` and resolves each one's code (RENEWED, NOT_OURS, GONE, ELSEWHERE), or the
   * refusal of one renewed alone for data of another type at its key (see `renewElsewhere`);
   * rejects if a call failed.
   */
  async renewCodes(requests: RenewalRequest[]): Promise<(number | RenewalRefusal)[]> {
    const codes: (number | RenewalRefusal)[] = new Array(requests.length);
    await Promise.all(
      this.codeParts(requests).map(async (part) => {
        const replies = await part.codes;
        part.indexes.forEach((index, i) => (codes[index] = replies[i]!));
      }),
    );
    return codes;
  }

  private codeParts(requests: RenewalRequest[]): { indexes: number[]; codes: Promise<(number | RenewalRefusal)[]> }[] {
    let groups: number[][];
    let perNode = false;
    if (!this.isCluster) {
      groups = byCount(requests.length);
    } else {
      // Until the servers' version is known, per slot: right on any version, only more calls.
      perNode = this.redis7 === true;
      if (this.redis7 === undefined) this.learnVersions();
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
      const codes = (perNode ? this.renewNode(keys, args) : this.renewMany(keys, args)).then((replies) => this.renewElsewhere(indexes, replies, requests));
      return { indexes, codes };
    });
  }

  /**
   * Locks a per-node call found on a node that does not serve their slot (a slot migrating or
   * moved since the client's slot map was read) are renewed one by one, as declared keys:
   * the client then follows Redis' ASK and MOVED redirections, and refreshes its slot map. So are
   * locks whose key a batch found of another type (see RENEW_LOOP), and the others of its call are
   * renewed. Refused alone for that (WRONGTYPE: a declared key, so Redis' word, not a slot on its
   * way), such a lock's code is that refusal (a `RenewalRefusal`): not ours, its loss told once and
   * naming the key's data, where it stayed ELSEWHERE, renewed alone again at every tick on a Cluster
   * and in quorum mode until its lease ran out, then told as expired. Any other failure of it
   * leaves it ELSEWHERE.
   */
  private async renewElsewhere(indexes: number[], replies: number[], requests: RenewalRequest[]): Promise<(number | RenewalRefusal)[]> {
    const codes: (number | RenewalRefusal)[] = replies;
    const retries: Promise<void>[] = [];
    replies.forEach((code, i) => {
      if (code !== ELSEWHERE) return;
      const { lockKey, token, ttl } = requests[indexes[i]!]!;
      retries.push(
        this.renewCode(lockKey, token, ttl).then(
          (retried) => void (codes[i] = retried),
          (error: unknown) => void (holdsForeignData(error) && (codes[i] = new RenewalRefusal(error))),
        ),
      );
    });
    await Promise.all(retries);
    return codes;
  }

  /** See RENEW_NODE. The client prefixes the declared first key only; the others get it here. */
  private async renewNode(locks: string[], args: (string | number)[]): Promise<number[]> {
    const others = locks.slice(1).map((lock) => this.keyPrefix + lock);
    return this.handOnEachOwed((await this.calls.renewNode(locks[0]!, locks.length, ...others, ...args)) as number[], locks, args);
  }

  /**
   * Whether renewals go out as one call per master (every master runs Redis 7: the script is
   * flagged): learns it on a Cluster, once every master has answered. Until then, and for ever
   * outside a Cluster, renewals are grouped per slot or by count, which is right on any version.
   * Nothing else waits for this answer: release messages are sharded or not per server, decided
   * inside the scripts (see `QUEUE_MEMBERS`), so a master that does not answer blocks no acquire.
   */
  perMasterRenewals(): Promise<boolean> {
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

  /**
   * The scripts' sharded flag: '1' on a Cluster, where each server publishes with SPUBLISH if it
   * runs Redis 7 and with PUBLISH otherwise (see `QUEUE_MEMBERS`); the release notifier
   * subscribes to match, per channel.
   */
  private get shardFlag(): '0' | '1' {
    return this.isCluster ? '1' : '0';
  }

  /** Known once every master answered; until then renewals go per slot. */
  private redis7?: boolean;
  private asking?: Promise<boolean>;

  /**
   * Starts `clusterOnRedis7` in the background, unless it is under way or failed less than a
   * second ago: while a master is down, acquisitions must not each send INFO to every master.
   */
  private learnVersions(): void {
    if (this.asking !== undefined || performance.now() < this.askAgainAt) return;
    this.clusterOnRedis7().catch(() => (this.askAgainAt = performance.now() + 1_000));
  }

  private askAgainAt = 0;

  /**
   * Whether every master runs Redis 7 or later (script flags). A failed check is not
   * remembered: it is asked again later. A master that never answers leaves it pending, and
   * renewals per slot, without holding up anything else.
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

  async keepFence(fence: string): Promise<void> {
    if (this.fenceRetention === '0') return;
    await this.runScript(KEEP_FENCE_SCRIPT, [fence], [this.fenceRetention]);
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
    const fencingToken = fence === null ? null : fencingCounter(fence);
    if (owner !== READ_HELD) return { owner, pttl, fencingToken, waiters };
    // Held by readers: only while one of them is still there, for as long as the longest lease
    // left (the '~r' value keeps the longest lease it ever guarded, a reader's gone since too).
    const left = await this.readersLeft(keys.lock);
    if (left === undefined) return { owner: null, pttl, fencingToken, waiters };
    return { owner, pttl: left.pttl, fencingToken, waiters, readers: left.readers };
  }

  /**
   * A quorum node's owner of `lock` and its fencing counter, in two plain `GET`s: what quorum mode
   * reads of the other nodes (the least-privilege user it documents has no `ZCARD`, which
   * `inspect` also sends). A counter no fencing token can be (a word, past 2^53, below 1: written
   * by something else) is `null`, as a lost one: a restored node raised to it would hold a value
   * the library never writes (`Number()` rounds past 2^53), or to NaN, which raises nothing. So is
   * one with a leading zero (`007`), which INCR refuses as it does a word (and `inspect` reports as
   * foreign): read as a number, `0999999999999999` was a floor above every token handed out.
   */
  async ownerAndCounter(lock: string): Promise<{ owner: string | null; fencingToken: number | null }> {
    const [owner, fence] = await this.driver.read([
      ['GET', lock],
      ['GET', lock + LOCK_KEY_SUFFIXES.fence],
    ]);
    const text = fence === null || fence === undefined ? '' : String(fence);
    const counter = /^[1-9]\d{0,15}$/.test(text) ? Number(text) : 0;
    return { owner: (owner as string | null) ?? null, fencingToken: counter >= 1 && Number.isSafeInteger(counter) ? counter : null };
  }

  /**
   * The read-only `LOCK_HELD` of a key held by readers, in plain reads (two round trips): how many
   * readers' keys are still there, and the longest lease left of theirs (-1 if one has no
   * expiry), or undefined when none is.
   */
  private async readersLeft(lock: string): Promise<{ pttl: number; readers: number } | undefined> {
    const [entries] = await this.driver.read([['HGETALL', `${lock}:readers`]]);
    const fields = flatPairs(entries);
    const readers: ReadCommand[] = [];
    for (let i = 0; i < fields.length; i += 2) readers.push(['PTTL', `${lock}:reader:${fields[i]}`]);
    if (readers.length === 0) return undefined;
    const pttls = (await this.driver.read(readers)).map(Number);
    const pttl = longestLease(pttls);
    // -2: that reader's key is gone (crashed, its lease ran out).
    return pttl === undefined ? undefined : { pttl, readers: pttls.filter((left) => left !== -2).length };
  }

  /** The semaphore of the same key, with plain reads (see `semaphore/semaphore-inspect.ts`). */
  inspectSemaphore(keys: LockRedisKeys): Promise<SemaphoreSnapshot | null> {
    return inspectSemaphoreInRedis((commands) => this.driver.read(commands), keys);
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
/** `open`: whether a NOSCRIPT answer may still be followed by the EVAL (see `LockScripts.close`). */
function sendBare<T>(script: BareScriptCall, args: (string | number)[], parse: (reply: unknown) => T, whole: boolean, open: () => boolean): Promise<T> {
  if (whole) return script.resend(...args).then(parse, throwScriptError);
  return script.send(...args).then(parse, (error: unknown) => {
    if (!isNoScript(error) || !open()) throw scriptError(error);
    return script.resend(...args).then(parse, throwScriptError);
  });
}

/**
 * The other scripts (renewals, the fence floor) for one store: EVALSHA, and EVAL on NOSCRIPT
 * while `open()` (see `LockScripts.close`): a fallback of the driver's own, or of ioredis'
 * `defineCommand`, is shared by every store on the client and would send the EVAL whatever
 * happened since.
 */
function guardedScripts(driver: RedisDriver, open: () => boolean): Record<ScriptName, ScriptCall> {
  const calls = {} as Record<ScriptName, ScriptCall>;
  for (const [name, { numberOfKeys, lua }] of Object.entries(COMMANDS) as [ScriptName, (typeof COMMANDS)[ScriptName]][]) {
    const script: LuaScript = { lua, sha: createHash('sha1').update(lua).digest('hex') };
    // A script without a fixed key count is called with the count first.
    calls[name] =
      numberOfKeys === null
        ? (count, ...rest) => driver.evalScript(script, rest.slice(0, Number(count)) as string[], rest.slice(Number(count)), false, open)
        : (...args) => driver.evalScript(script, args.slice(0, numberOfKeys) as string[], args.slice(numberOfKeys), false, open);
  }
  return calls;
}

/** What may follow the settings: nothing, or acquire's "join the queue on failure" flag. */
const SETTINGS_SUFFIXES = ['', ':0', ':1', ':2'] as const;


/**
 * A fencing counter as `inspect` reads it: an integer as INCR reads one (no leading zero, no
 * `-0`). Anything else was written by something other than this library, and every acquire script
 * of the key is refused on it ("value is not an integer"): said so, rather than answered as the
 * token `NaN` (or 7 for `007`). `0` is no token (the API's "none"), and no acquisition handed it
 * out: the next one's `INCR` answers 1, which starts the counter at the clock as a lost one (see
 * `NEXT_FENCING`), so it reads as a counter that is gone (`null`).
 */
function fencingCounter(fence: string): number | null {
  if (!/^(?:0|-?[1-9]\d*)$/.test(fence)) throw new ForeignDataRead('its fencing counter holds a value that is not an integer');
  if (fence === '0') return null;
  // Out of the tokens' range (negative, or past 2^53: inexact as a number), every acquire script is refused on it too (see NEXT_FENCING).
  const counter = Number(fence);
  if (counter < 0 || !Number.isSafeInteger(counter)) throw new ForeignDataRead('its fencing counter holds a value no fencing token can be');
  return counter;
}
