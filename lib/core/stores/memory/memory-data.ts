// The keyspace of the in-memory store, shared by the mutex, the semaphore and the read side.
import { READ_HELD } from '../../rwlock/read-keys.js';
import { setImmediate } from '../../time/real-timers.js';
import { ExpirySweep } from './memory-sweep.js';

/** The time the in-memory store counts leases with: what `TIME` is to the Redis scripts. */
export interface StoreClock {
  now(): number;
  /** Wall-clock milliseconds, where a value must outlive the process (see `nextFence`); `Date.now()` without it. */
  epochNow?(): number;
}

/** Receives what the Redis scripts would PUBLISH: `<token>:<fencing token>` on a lock's channel. */
export type Publish = (channel: string, message: string) => void;

export interface Entry<T> {
  value: T;
  /** Clock time at which the key expires; Infinity for none. */
  expiresAt: number;
}

/** The keyspace of an in-memory store. */
export class MemoryData {
  readonly locks = new Map<string, Entry<string>>();
  readonly fences = new Map<string, Entry<number>>();
  readonly waiting = new Map<string, Entry<Queue>>();
  /**
   * Semaphores' holder hashes (token -> `<permits>:<fencing>`) and limits (see `semaphore/`),
   * expiring with the longest lease they guard (see `outlive`).
   */
  readonly semaphoreHolders = new Map<string, Entry<Map<string, string>>>();
  readonly semaphoreLimits = new Map<string, Entry<number>>();
  /** Read-write locks' reader hashes (`<lock>:readers`: token -> fencing token, see `rwlock/`), expiring likewise. */
  readonly readers = new Map<string, Entry<Map<string, number>>>();
  /** Locks barging waiters wait for (`<lock>:wanted`, see `wantedKey`), each until a waiter lease after its latest ask. */
  readonly wanted = new Map<string, Entry<true>>();
  /**
   * The highest fencing token this store handed out, kept through `clear()`: a new counter starts
   * above it (see `nextFence`), so that tokens never go back within one store.
   */
  highestFence = 0;
  /** Drops expired keys that no call reads (see `sweep`). */
  private readonly expiry = new ExpirySweep([this.locks, this.fences, this.waiting, this.semaphoreHolders, this.semaphoreLimits, this.readers, this.wanted]);

  /** Redis' active expiry, a few keys at each store call (see `ExpirySweep`). */
  sweep(now: number): void {
    this.expiry.step(now);
  }

  clear(): void {
    this.locks.clear();
    this.fences.clear();
    this.waiting.clear();
    this.semaphoreHolders.clear();
    this.semaphoreLimits.clear();
    this.readers.clear();
    this.wanted.clear();
  }
}

export interface Queue {
  /** Arrival order of `<token>:<ttl>` members (the Redis list). */
  order: string[];
  /** Until when each member is known to be alive (the Redis sorted set). */
  aliveUntil: Map<string, number>;
  /**
   * A semaphore's queue: the waiter lease its waiters were queued with, which a renewal that frees
   * a holder's permits hands them on with (the Lua `:queued` mark, see `MemorySemaphores.forgetPermit`).
   */
  waiterLease?: number;
}

/**
 * The value of a key that has not expired, dropping it once expired, as Redis expires keys
 * lazily: gone once the clock is past its expiry, not at it. Every part of the in-memory store
 * reads keys through this, so that they agree on that millisecond.
 */
export function liveValue<T>(map: Map<string, Entry<T>>, key: string, now: number): T | undefined {
  const entry = map.get(key);
  if (entry === undefined) return undefined;
  if (entry.expiresAt < now) {
    map.delete(key);
    return undefined;
  }
  return entry.value;
}

/** PTTL: -2 for a missing or expired key, -1 for one without expiry. */
export function keyPttl(map: Map<string, Entry<unknown>>, key: string, now: number): number {
  const entry = map.get(key);
  if (entry === undefined || entry.expiresAt < now) return -2;
  return entry.expiresAt === Infinity ? -1 : Math.ceil(entry.expiresAt - now);
}

/** Drops `member` from the queue at `queueKey` (list and set); an empty queue goes, as the Redis list does. */
export function removeWaiter(waiting: Map<string, Entry<Queue>>, queueKey: string, queue: Queue, member: string): void {
  const index = queue.order.indexOf(member);
  if (index >= 0) queue.order.splice(index, 1);
  queue.aliveUntil.delete(member);
  if (queue.order.length === 0) waiting.delete(queueKey);
}

/**
 * The Lua `join_queue`: queues `member` or refreshes its place, alive for another `waiterLease`;
 * the queue outlives its last join by the grace a lapsed waiter keeps its place for. True when
 * `member` was not queued before (the busy reply's `joined`).
 */
export function joinQueue(waiting: Map<string, Entry<Queue>>, queueKey: string, member: string, now: number, waiterLease: number): boolean {
  const queue = liveValue(waiting, queueKey, now) ?? { order: [], aliveUntil: new Map<string, number>() };
  const joined = !queue.aliveUntil.has(member);
  if (joined) queue.order.push(member);
  queue.aliveUntil.set(member, now + waiterLease);
  waiting.set(queueKey, { value: queue, expiresAt: now + 2 * waiterLease });
  return joined;
}

/**
 * The first waiter of the queue at `queueKey` still alive at `now`; dead ones ahead of it are
 * dropped (the Lua `live_head`), but not one that `keeps` its place (lapsed at `aliveUntil`):
 * that one is the head.
 */
export function liveHead(waiting: Map<string, Entry<Queue>>, queueKey: string, now: number, keeps?: (member: string, aliveUntil: number) => boolean): string | undefined {
  const queue = liveValue(waiting, queueKey, now);
  if (queue === undefined) return undefined;
  for (;;) {
    const head = queue.order[0];
    if (head === undefined) return undefined;
    const aliveUntil = queue.aliveUntil.get(head);
    if (aliveUntil !== undefined && aliveUntil >= now) return head;
    if (aliveUntil !== undefined && keeps?.(head, aliveUntil)) return head;
    removeWaiter(waiting, queueKey, queue, head);
  }
}

/**
 * The Lua `outlive`: an existing key lives at least until `until` (the keys that guard leases
 * expire with the longest lease they guard).
 */
export function outlive(map: Map<string, Entry<unknown>>, key: string, until: number, now: number): void {
  const entry = map.get(key);
  if (entry !== undefined && entry.expiresAt >= now && entry.expiresAt < until) entry.expiresAt = until;
}

/** The Lua `renew_guards`: renewing a reader's or a semaphore holder's lease keeps the keys guarding it as long. */
export function renewGuards(data: MemoryData, key: string, token: string, until: number, now: number): boolean {
  if (key.endsWith('}') || !key.endsWith(token)) return true;
  const cut = key.length - token.length - ':reader:'.length;
  const kind = key.slice(cut, cut + ':reader:'.length);
  const base = key.slice(0, cut);
  // As the script: no lease renewed beyond the guard that keeps the others out (false: not renewed, not known lost).
  if (kind === ':reader:') {
    if (liveValue(data.locks, base, now) !== READ_HELD || liveValue(data.readers, `${base}:readers`, now)?.has(token) !== true) return false;
    outlive(data.locks, base, until, now);
    outlive(data.readers, `${base}:readers`, until, now);
  } else if (kind === ':permit:') {
    if (liveValue(data.semaphoreHolders, `${base}:holders`, now)?.has(token) !== true) return false;
    // The limit is kept under the holders' name, as Redis keeps it in their hash (see MemorySemaphores).
    outlive(data.semaphoreHolders, `${base}:holders`, until, now);
    outlive(data.semaphoreLimits, `${base}:holders`, until, now);
  }
  return true;
}

/**
 * INCR of a fencing counter; with a retention, each new token restarts its expiry. A new counter
 * (or one whose retention ran out) starts at the wall clock in milliseconds (`epochNow`), as the
 * Redis scripts' start at `TIME` (see `NEXT_FENCING`): a fenced resource outlives the process and
 * keeps the highest token it saw, so the tokens of a process started again must go on above
 * the last one's, which `now` (milliseconds since the process started, 0 when a manual clock
 * starts) would not. And above every token this store handed out (`highestFence`): a counter
 * dropped by `clear()` or its retention, with the wall clock standing still or behind, does not go
 * back. A manual clock does not move the wall clock: advanced a day, it would hand tokens a day
 * ahead to a resource the next run must write to.
 */
export function nextFence(data: MemoryData, fence: string, now: number, fenceRetention: number, epochNow: number): number {
  const current = liveValue(data.fences, fence, now);
  const next = current === undefined ? Math.max(1, Math.floor(epochNow), data.highestFence + 1) : current + 1;
  if (next > data.highestFence) data.highestFence = next;
  const previous = data.fences.get(fence);
  const expiresAt = fenceRetention > 0 ? now + fenceRetention : (previous?.expiresAt ?? Infinity);
  data.fences.set(fence, { value: next, expiresAt });
  return next;
}

/** Calls this process made to in-memory stores so far: the manual clock waits until they stop (see `ManualClock`). */
let storeCalls = 0;

/** How many in-memory store calls this process has begun. */
export function storeCallsBegun(): number {
  return storeCalls;
}

/**
 * Replies come asynchronously, as from a server: never within the caller's own tick. Each call
 * also sweeps a few of `data`'s keys whose time on `clock` is out (see `ExpirySweep`).
 */
export function settled(data: MemoryData, clock: StoreClock): Promise<void> {
  storeCalls++;
  return new Promise((resolve) =>
    setImmediate(() => {
      data.sweep(clock.now());
      resolve();
    }),
  );
}

