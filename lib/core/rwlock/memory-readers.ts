import type { AcquireReply, Grant, ReleaseReply, ScriptKeys } from '../stores/lock-store.js';
import { joinQueue, keyPttl, liveValue, outlive, settled, type MemoryData, type Publish, type StoreClock } from '../stores/memory/memory-data.js';
import { READ_HELD, type ReadKeys } from './read-keys.js';
import type { ReadStore } from './read-store.js';
import { setImmediate } from '../time/real-timers.js';

/** What a lock key holds while readers hold it (never an owner token), as in the Lua. */
export { READ_HELD } from './read-keys.js';

/** Whether a queue member is a reader's (theirs end in ':r', as in the Lua). */
export function isReaderMember(member: string): boolean {
  return member.endsWith(':r');
}

/** The memory store's queue steps the read side shares (the Lua queue functions). */
export interface MemoryQueue {
  /** `grace` (readers hold the lock): a writer that lapsed at the head less than `grace` ago keeps its place. */
  liveHead(keys: ScriptKeys, now: number, grace?: number): string | undefined;
  popHead(keys: ScriptKeys): void;
  removeMember(keys: ScriptKeys, member: string): void;
  grantNext(keys: ScriptKeys, grantMs: number, now: number): Grant[];
  /** The lock is free: barging waiters that said they wait are told (the Lua `publish_freed`). */
  publishFreed(keys: ScriptKeys, now: number): void;
  nextFence(fence: string, now: number): number;
}

/**
 * The Lua `readers_alive`: 1 when a reader's key is still there, 0 when none is; stops at the first
 * live reader, dropping the entries of gone ones before it (in the hash's order: a Redis hash of
 * short fields keeps insertion order, as a Map does).
 */
export function readersAlive(data: MemoryData, lock: string, now: number): number {
  const readers = liveValue(data.readers, `${lock}:readers`, now);
  if (readers === undefined) return 0;
  for (const token of [...readers.keys()]) {
    const entry = data.locks.get(`${lock}:reader:${token}`);
    if (entry !== undefined && entry.expiresAt >= now) return 1;
    readers.delete(token);
  }
  data.readers.delete(`${lock}:readers`);
  return 0;
}

/** The Lua `grant_readers`: every reader at the head of the queue comes in; returns them all. */
export function grantReaders(data: MemoryData, queue: MemoryQueue, publish: Publish, keys: ScriptKeys, grantMs: number, now: number): Grant[] {
  const grants: Grant[] = [];
  for (;;) {
    const head = queue.liveHead(keys, now, grantMs);
    if (head === undefined) break;
    const match = /^([^:]+):(\d+):r$/.exec(head);
    if (match === null) break;
    const [, token, ttl] = match as unknown as [string, string, string];
    const fencingToken = admit(data, queue, keys.lock, keys.fence, token, Math.min(Number(ttl), grantMs), now);
    queue.popHead(keys);
    const message = `${token}:${fencingToken}`;
    // Messages reach subscribers after the script's reply, as they do over a second connection.
    setImmediate(() => publish(keys.released, message));
    grants.push({ token, fencingToken });
  }
  return grants;
}

/** The Lua `admit_reader`: the reader's key and entry, and the keys guarding it kept as long. */
function admit(data: MemoryData, queue: MemoryQueue, lock: string, fence: string, token: string, lease: number, now: number): number {
  if (liveValue(data.locks, lock, now) === READ_HELD) outlive(data.locks, lock, now + lease, now);
  else {
    // A new set of readers: entries left are of readers whose '~r' was taken from them.
    data.readers.delete(`${lock}:readers`);
    data.locks.set(lock, { value: READ_HELD, expiresAt: now + lease });
  }
  data.locks.set(`${lock}:reader:${token}`, { value: token, expiresAt: now + lease });
  const fencingToken = queue.nextFence(fence, now);
  let readers = liveValue(data.readers, `${lock}:readers`, now);
  if (readers === undefined) data.readers.set(`${lock}:readers`, { value: (readers = new Map()), expiresAt: now + lease });
  readers.set(token, fencingToken);
  outlive(data.readers, `${lock}:readers`, now + lease, now);
  return fencingToken;
}

/**
 * The read side of read-write locks (`read-lua.ts`) in the memory of one process, step for
 * step on the keys of a `MemoryData`, sharing the memory store's queue.
 */
export class MemoryReaders implements ReadStore {
  constructor(
    private readonly data: MemoryData,
    private readonly clock: StoreClock,
    private readonly publish: Publish,
    private readonly queue: MemoryQueue,
  ) {}

  async acquire(keys: ReadKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<AcquireReply> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const shared = this.shared(keys);
    let owner = liveValue(this.data.locks, shared.lock, this.clock.now());
    if (owner === READ_HELD) {
      const granted = this.mine(keys, token, ttl, now);
      if (granted) return granted;
      if (readersAlive(this.data, shared.lock, now) === 0) {
        this.data.locks.delete(shared.lock);
        owner = undefined;
      }
    }
    const member = `${token}:${ttl}:r`;
    // As the script does: the head matters only to a lock that is free or held by readers.
    const headIfOpen = (): string | undefined =>
      owner === undefined || owner === READ_HELD ? this.queue.liveHead(shared, now, owner === READ_HELD ? waiterLease : undefined) : undefined;
    let head = headIfOpen();
    if (head !== undefined && head !== member) {
      if (owner === undefined) this.queue.grantNext(shared, waiterLease, now);
      else if (owner === READ_HELD) grantReaders(this.data, this.queue, this.publish, shared, waiterLease, now);
      const granted = this.mine(keys, token, ttl, now);
      if (granted) return granted;
      owner = liveValue(this.data.locks, shared.lock, this.clock.now());
      head = headIfOpen();
    }
    if ((owner === undefined || owner === READ_HELD) && (head === undefined || head === member)) {
      if (head !== undefined) this.queue.popHead(shared);
      const fencingToken = admit(this.data, this.queue, shared.lock, keys.fence, token, ttl, now);
      grantReaders(this.data, this.queue, this.publish, shared, waiterLease, now);
      return { acquired: true, fencingToken };
    }
    const joined = enqueue && joinQueue(this.data.waiting, keys.queue, member, now, waiterLease);
    return { acquired: false, pttl: keyPttl(this.data.locks, shared.lock, now), fence: liveValue(this.data.fences, keys.fence, now) ?? 0, joined };
  }

  async release(keys: ReadKeys, token: string, waiterLease: number): Promise<ReleaseReply> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const released = liveValue(this.data.locks, keys.lock, this.clock.now()) === token;
    if (released) this.data.locks.delete(keys.lock);
    this.forget(keys, token, now);
    const shared = this.shared(keys);
    // Also when this reader's own lease lapsed: '~r' may guard no live reader any more, and left
    // there it would hold off writers until it lapses too (the longest reader lease).
    if (liveValue(this.data.locks, shared.lock, this.clock.now()) === READ_HELD && readersAlive(this.data, shared.lock, now) === 0) {
      this.data.locks.delete(shared.lock);
      const grants = this.queue.grantNext(shared, waiterLease, now);
      if (grants.length === 0) this.queue.publishFreed(shared, now);
      return { released, grant: grants[0], grants };
    }
    return { released };
  }

  async leave(keys: ReadKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const shared = this.shared(keys);
    this.queue.removeMember(shared, `${token}:${ttl}:r`);
    if (liveValue(this.data.locks, keys.lock, this.clock.now()) === token) this.data.locks.delete(keys.lock);
    this.forget(keys, token, now);
    let owner = liveValue(this.data.locks, shared.lock, this.clock.now());
    let freed = false;
    if (owner === READ_HELD && readersAlive(this.data, shared.lock, now) === 0) {
      this.data.locks.delete(shared.lock);
      owner = undefined;
      freed = true;
    }
    if (owner === undefined) {
      // The last reader (let in by an attempt its caller gave up on) freed the lock: barging
      // writers race for it, as after a reader's release.
      if (this.queue.grantNext(shared, waiterLease, now).length === 0 && freed) this.queue.publishFreed(shared, now);
    } else if (owner === READ_HELD) grantReaders(this.data, this.queue, this.publish, shared, waiterLease, now);
  }

  /** Let in already (by a grant): the lease restarts at ttl. */
  private mine(keys: ReadKeys, token: string, ttl: number, now: number): AcquireReply | undefined {
    const fencingToken = liveValue(this.data.readers, keys.read.readers, now)?.get(token);
    if (fencingToken === undefined || liveValue(this.data.locks, keys.lock, this.clock.now()) !== token) return undefined;
    this.data.locks.set(keys.lock, { value: token, expiresAt: now + ttl });
    outlive(this.data.locks, keys.read.shared, now + ttl, now);
    outlive(this.data.readers, keys.read.readers, now + ttl, now);
    return { acquired: true, fencingToken };
  }

  /** HDEL of the reader's entry; like Redis, a hash with no fields left no longer exists. */
  private forget(keys: ReadKeys, token: string, now: number): void {
    const readers = liveValue(this.data.readers, keys.read.readers, now);
    readers?.delete(token);
    if (readers?.size === 0) this.data.readers.delete(keys.read.readers);
  }

  /** The lock's own names, as the queue steps take them. */
  private shared(keys: ReadKeys): ScriptKeys {
    return { lock: keys.read.shared, fence: keys.fence, queue: keys.queue, waiters: keys.waiters, released: keys.released };
  }


}
