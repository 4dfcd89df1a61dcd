import type { AcquireReply, Enqueue, Grant, LockSnapshot, LockStore, ParkRequest, ReleaseReply, RenewalOutcome, RenewalPart, RenewalRequest, ScriptKeys } from '../lock-store.js';
import { joinQueue, keyPttl, liveHead, liveValue, MemoryData, nextFence, removeWaiter, renewGuards, settled, type Entry, type Publish, type Queue, type StoreClock } from './memory-data.js';
import { MemorySemaphores } from '../../semaphore/memory-semaphores.js';
import { inspectSemaphoreInMemory, type SemaphoreSnapshot } from '../../semaphore/semaphore-inspect.js';
import { wantedKey, type LockRedisKeys } from '../../keys/lock-key.js';
import { FREED_MESSAGE } from '../lock-replies.js';
import { setImmediate } from '../../time/real-timers.js';
import { longestLease } from '../../engine/lease-left.js';
export { MemoryData, type Publish, type StoreClock } from './memory-data.js';
import { grantReaders, isReaderMember, MemoryReaders, READ_HELD, readersAlive, type MemoryQueue } from '../../rwlock/memory-readers.js';

/**
 * The lock protocol in the memory of one process, step for step what the Lua scripts of
 * `LockScripts` do to Redis keys: the same owner checks, FIFO queue with liveness leases,
 * handoff with a short grant lease, fencing counters and expiries, on `clock` instead of the
 * Redis server's clock. Locks exclude callers of this process only.
 */
export class MemoryStore implements LockStore, MemoryQueue {
  readonly queues = true;
  readonly barges = true;
  /** The counting semaphore's protocol on the same keys and clock. */
  readonly semaphores: MemorySemaphores;
  /** The read side of read-write locks, sharing this store's queues. */
  readonly readers: MemoryReaders;
  private readonly locks: Map<string, Entry<string>>;
  private readonly fences: Map<string, Entry<number>>;
  private readonly waiting: Map<string, Entry<Queue>>;

  constructor(
    /** The keys, shared by every application on this store (as a Redis server's are). */
    private readonly data: MemoryData,
    private readonly clock: StoreClock,
    private readonly publish: Publish,
    /** ms after its last token until an idle fencing counter expires; 0 keeps it forever. */
    private readonly fenceRetention = 0,
  ) {
    ({ locks: this.locks, fences: this.fences, waiting: this.waiting } = data);
    this.semaphores = new MemorySemaphores(data, clock, publish, fenceRetention);
    this.readers = new MemoryReaders(data, clock, publish, this);
  }

  async acquire(keys: ScriptKeys, token: string, ttl: number, enqueue: Enqueue, waiterLease: number): Promise<AcquireReply> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    let owner = liveValue(this.locks, keys.lock, this.clock.now());
    if (owner === token) {
      this.locks.set(keys.lock, { value: token, expiresAt: now + ttl });
      // The next token, as Redis' ACQUIRE answers: the counter as it stands may be the token a
      // same-named semaphore's holder took since the grant. A counter lost meanwhile starts again.
      return { acquired: true, fencingToken: this.nextFence(keys.fence, now) };
    }
    const member = `${token}:${ttl}`;
    // Held by readers that have all gone (crashed): free.
    if (owner === READ_HELD && readersAlive(this.data, keys.lock, now) === 0) {
      this.locks.delete(keys.lock);
      owner = undefined;
    }
    if (owner === undefined) {
      const head = this.liveHead(keys, now);
      if (head === undefined || head === member) {
        this.locks.set(keys.lock, { value: token, expiresAt: now + ttl });
        if (head !== undefined) this.popHead(keys);
        return { acquired: true, fencingToken: this.nextFence(keys.fence, now) };
      }
      this.grantNext(keys, waiterLease, now);
    }
    let joined = false;
    if (enqueue === 'barging') {
      this.data.wanted.set(wantedKey(keys.lock), { value: true, expiresAt: now + waiterLease });
    } else if (enqueue) {
      joined = joinQueue(this.waiting, keys.queue, member, now, waiterLease);
    }
    return { acquired: false, pttl: keyPttl(this.locks, keys.lock, now), fence: liveValue(this.fences, keys.fence, now) ?? 0, joined };
  }

  async renew(lockKey: string, token: string, ttl: number): Promise<RenewalOutcome> {
    await settled(this.data, this.clock);
    return this.renewOne(lockKey, token, ttl, this.clock.now());
  }

  renewBatch(requests: RenewalRequest[]): RenewalPart[] {
    const outcomes = settled(this.data, this.clock).then(() => {
      const now = this.clock.now();
      return requests.map(({ lockKey, token, ttl }): RenewalOutcome => this.renewOne(lockKey, token, ttl, now));
    });
    return [{ indexes: requests.map((_, i) => i), outcomes }];
  }

  async release(keys: ScriptKeys, token: string, waiterLease: number, park?: ParkRequest): Promise<ReleaseReply> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    if (liveValue(this.locks, keys.lock, this.clock.now()) !== token) return { released: false };
    if (park !== undefined && liveValue(this.waiting, keys.queue, now) === undefined) {
      this.locks.set(keys.lock, { value: park.token, expiresAt: now + park.ttl });
      const contended = liveValue(this.data.wanted, wantedKey(keys.lock), now) !== undefined;
      return { released: true, parked: { fencingToken: this.nextFence(keys.fence, now), contended } };
    }
    this.locks.delete(keys.lock);
    const grants = this.grantNext(keys, waiterLease, now);
    if (grants.length === 0) this.publishFreed(keys, now);
    return { released: true, grant: grants[0], grants };
  }

  async leave(keys: ScriptKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const member = `${token}:${ttl}`;
    const queue = liveValue(this.waiting, keys.queue, this.clock.now());
    if (queue !== undefined) this.remove(keys, queue, member);
    let owner = liveValue(this.locks, keys.lock, this.clock.now());
    let freed = owner === token;
    if (freed) this.locks.delete(keys.lock);
    if (owner === READ_HELD && readersAlive(this.data, keys.lock, now) === 0) {
      this.locks.delete(keys.lock);
      owner = undefined;
      freed = true;
    }
    if (freed || owner === undefined) {
      // A lock an uncertain attempt took, given back, or one whose readers all crashed, freed
      // here: barging waiters race for it.
      if (this.grantNext(keys, waiterLease, now).length === 0 && freed) this.publishFreed(keys, now);
    }
    // A waiting writer that gives up may have been all that held back the readers behind it.
    else if (owner === READ_HELD) grantReaders(this.data, this, this.publish, keys, waiterLease, now);
  }

  async exists(lockKey: string): Promise<boolean> {
    await settled(this.data, this.clock);
    return this.held(lockKey);
  }

  /** The Lua `LOCK_HELD`: a key held by readers counts while one of them is still there. */
  private held(lockKey: string): boolean {
    const owner = liveValue(this.locks, lockKey, this.clock.now());
    if (owner !== READ_HELD) return owner !== undefined;
    return readersAlive(this.data, lockKey, this.clock.now()) > 0;
  }

  async inspect(keys: ScriptKeys): Promise<LockSnapshot> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const owner = this.held(keys.lock) ? (liveValue(this.locks, keys.lock, this.clock.now()) ?? null) : null;
    const queue = liveValue(this.waiting, keys.queue, this.clock.now());
    // Held by readers: the longest lease left of theirs, as the Redis store reads it ('~r' keeps
    // the longest lease it ever guarded, a reader's gone since too).
    const readers = owner === READ_HELD ? [...(liveValue(this.data.readers, `${keys.lock}:readers`, now)?.keys() ?? [])] : [];
    const pttls = readers.map((token) => keyPttl(this.locks, `${keys.lock}:reader:${token}`, now));
    const pttl = (owner === READ_HELD ? longestLease(pttls) : undefined) ?? keyPttl(this.locks, keys.lock, now);
    const fencingToken = liveValue(this.fences, keys.fence, this.clock.now()) ?? null;
    const waiters = queue?.aliveUntil.size ?? 0;
    if (owner !== READ_HELD) return { owner, pttl, fencingToken, waiters };
    return { owner, pttl, fencingToken, waiters, readers: pttls.filter((left) => left !== -2).length };
  }

  /** The semaphore of the same key, read without writing (see `semaphore/semaphore-inspect.ts`). */
  inspectSemaphore(keys: LockRedisKeys): Promise<SemaphoreSnapshot | null> {
    return inspectSemaphoreInMemory(this.data, this.clock, keys);
  }

  /**
   * For the lock board: the lock keys held now whose name starts with `prefix`, and the
   * holders hashes (`<prefix>{<key>}:holders`) of semaphores with holders or waiters, as a SCAN
   * of Redis would find them. As SCAN does, it walks the keys in an order of their own, their hash, not
   * their place among the keys held now: the cursor is the hash to go on from, so a key held
   * for the whole walk is listed although keys before it came and went. Keys of one hash go
   * out on one page (which may so hold a few more than `count`, as SCAN's may).
   */
  async scanLocks(prefix: string, cursor: string, count: number): Promise<{ next: string; keys: string[] }> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const locks = [...this.locks.keys()].filter((key) => key.startsWith(`${prefix}{`) && key.endsWith('}') && liveValue(this.locks, key, now) !== undefined);
    // Redis keeps the limit in the holders hash, which so lives while waiters wait (the scripts'
    // `keep_limit`), holders or none: this twin keeps it in a map of its own, under the same name.
    const semaphores = [...new Set([...this.data.semaphoreHolders.keys(), ...this.data.semaphoreLimits.keys()])].filter(
      (key) => key.startsWith(`${prefix}{`) && key.endsWith('}:holders') && (liveValue(this.data.semaphoreHolders, key, now) !== undefined || liveValue(this.data.semaphoreLimits, key, now) !== undefined),
    );
    const from = Number(cursor) || 0;
    const order = [...locks, ...semaphores]
      .map((key) => ({ key, hash: scanHash(key) }))
      .filter(({ hash }) => hash >= from)
      .sort((a, b) => a.hash - b.hash || (a.key < b.key ? -1 : 1));
    const keys: string[] = [];
    let last = -1;
    let i = 0;
    for (; i < order.length && (keys.length < count || order[i]!.hash === last); i++) {
      keys.push(order[i]!.key);
      last = order[i]!.hash;
    }
    return { next: i >= order.length ? '0' : String(last + 1), keys };
  }

  async keepFence(fence: string): Promise<void> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const entry = this.fences.get(fence);
    if (this.fenceRetention > 0 && entry !== undefined && entry.expiresAt > now && entry.expiresAt !== Infinity) entry.expiresAt = now + this.fenceRetention;
  }

  /** Deletes a lock whoever holds it (the lock board's "release by force", a test's theft). */
  delete(lockKey: string): void {
    this.locks.delete(lockKey);
  }

  private renewOne(lockKey: string, token: string, ttl: number, now: number): RenewalOutcome {
    if (liveValue(this.locks, lockKey, this.clock.now()) !== token) {
      // A semaphore permit gone: its entry goes, its permits to the waiters (the Lua `forget_permit`).
      this.semaphores.forgetPermit(lockKey, token, now);
      return false;
    }
    // One store, no Cluster slot to migrate: guards not there are gone, as on one Redis server.
    if (!renewGuards(this.data, lockKey, token, now + ttl, now)) return false;
    this.locks.set(lockKey, { value: token, expiresAt: now + ttl });
    return true;
  }

  /**
   * @internal Queue step shared with the read side (`MemoryQueue`): see `liveHead` in
   * memory-data.ts and the Lua `live_head`.
   */
  liveHead(keys: ScriptKeys, now: number, grace?: number): string | undefined {
    return liveHead(this.waiting, keys.queue, now, grace === undefined ? undefined : (member, aliveUntil) => !isReaderMember(member) && aliveUntil + grace >= now);
  }

  /**
   * @internal Hands a free lock to the live head of the queue for a short lease (the Lua
   * `grant_next`), or to every reader at the head; returns whom. Queue step shared with the read
   * side (`MemoryQueue`).
   */
  grantNext(keys: ScriptKeys, grantMs: number, now: number): Grant[] {
    for (;;) {
      const head = this.liveHead(keys, now);
      if (head === undefined) return [];
      const match = /^([^:]+):([1-9]\d*)$/.exec(head);
      if (match === null && /^[^:]+:[1-9]\d*:r$/.test(head)) return grantReaders(this.data, this, this.publish, keys, grantMs, now);
      if (match === null) {
        this.popHead(keys);
        continue;
      }
      const [, token, ttl] = match as unknown as [string, string, string];
      this.locks.set(keys.lock, { value: token, expiresAt: now + Math.min(Number(ttl), grantMs) });
      const fencingToken = this.nextFence(keys.fence, now);
      this.popHead(keys);
      const message = `${token}:${fencingToken}`;
      // Messages reach subscribers after the script's reply, as they do over a second connection.
      setImmediate(() => this.publish(keys.released, message));
      return [{ token, fencingToken }];
    }
  }

  /** The lock is free and barging waiters wait: tell them once, and forget that they wait (the Lua `publish_freed`). */
  publishFreed(keys: ScriptKeys, now: number): void {
    const wanted = wantedKey(keys.lock);
    if (liveValue(this.data.wanted, wanted, now) === undefined) return;
    this.data.wanted.delete(wanted);
    setImmediate(() => this.publish(keys.released, FREED_MESSAGE));
  }

  /** @internal Queue step shared with the read side (`MemoryQueue`). */
  removeMember(keys: ScriptKeys, member: string): void {
    const queue = liveValue(this.waiting, keys.queue, this.clock.now());
    if (queue !== undefined) this.remove(keys, queue, member);
  }

  /** @internal Queue step shared with the read side (`MemoryQueue`). */
  popHead(keys: ScriptKeys): void {
    const queue = liveValue(this.waiting, keys.queue, this.clock.now());
    if (queue !== undefined && queue.order.length > 0) this.remove(keys, queue, queue.order[0]!);
  }

  /** Removes a member; like Redis, a queue with no members left no longer exists. */
  private remove(keys: ScriptKeys, queue: Queue, member: string): void {
    removeWaiter(this.waiting, keys.queue, queue, member);
  }

  /** @internal Queue step shared with the read side (`MemoryQueue`). */
  nextFence(fence: string, now: number): number {
    return nextFence(this.data, fence, now, this.fenceRetention, this.clock.epochNow?.() ?? Date.now());
  }
}

/** FNV-1a over the key's UTF-16 units: the scan order of `scanLocks`, fixed per key name. */
function scanHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}
