import type { Grant } from '../stores/lock-store.js';
import { joinQueue, liveHead, liveValue, nextFence, outlive, removeWaiter, settled, type MemoryData, type Publish, type StoreClock } from '../stores/memory/memory-data.js';
import { LOCK_KEY_SUFFIXES } from '../keys/lock-key.js';
import { SEMAPHORE_SUFFIXES, semaphoreKeys, type SemaphoreKeys } from './semaphore-keys.js';
import type { SemaphoreAcquireReply, SemaphoreReleaseReply, SemaphoreStore } from './semaphore-store.js';
import { setImmediate } from '../time/real-timers.js';

/**
 * The semaphore scripts (`semaphore-lua.ts`) in the memory of one process, on the keys of a
 * `MemoryData`: permits are entries of its `locks` (so the memory store's renewals renew them),
 * holders and limits its semaphore maps, the queue a `waiting` entry. It counts live holders
 * exactly on every call, where the scripts count from `:used` and look only at holders whose
 * known deadline passed (their due set) and take a fast path when nobody waits: the answers are
 * the same, since a count that still includes crashed holders only ever sends a caller on to
 * the exact count, never admits one. The busy reply's `pttl` is exact here and a lower bound there.
 */
export class MemorySemaphores implements SemaphoreStore {
  constructor(
    private readonly data: MemoryData,
    private readonly clock: StoreClock,
    private readonly publish: Publish,
    private readonly fenceRetention: number,
  ) {}

  async acquire(keys: SemaphoreKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<SemaphoreAcquireReply> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    const { limit, permits } = keys.semaphore;
    const { free, soonest } = this.freePermits(keys, limit, now);
    this.forgetLimitIfIdle(keys);
    const known = liveValue(this.data.semaphoreLimits, this.limitKey(keys), now);
    // As the script's `hand_on`: a call that answers without taking permits first hands what is
    // free (a crashed holder's permits, dropped by the count above) to the waiters that fit.
    if (known !== undefined && known !== limit) {
      this.grantFitting(keys, free - limit + known, waiterLease, now);
      return { acquired: false, pttl: -1, limitInUse: known };
    }
    const granted = this.mine(keys, token, ttl, now);
    if (granted) {
      this.grantFitting(keys, free, waiterLease, now);
      return granted;
    }
    const member = `${token}:${ttl}:${permits}`;
    // As the script does: a full semaphore's queue head is not read (nothing could be handed
    // out), so a waiter that lapsed there and refreshes keeps its place.
    const head = free > 0 ? this.liveHead(keys, now, free, waiterLease) : undefined;
    if ((head === undefined || head === member) && free >= permits) {
      if (head !== undefined) this.remove(keys, head);
      this.keepLimit(keys, now + ttl, now);
      const fencingToken = this.take(keys, token, permits, ttl, now);
      this.grantFitting(keys, free - permits, waiterLease, now);
      return { acquired: true, fencingToken };
    }
    if (head !== undefined && head !== member) {
      this.grantFitting(keys, free, waiterLease, now);
      const grantedNow = this.mine(keys, token, ttl, now);
      if (grantedNow) return grantedNow;
      // Everyone ahead was served and nobody is left queued: the caller fits in what is left.
      const left = this.freePermits(keys, limit, now).free;
      // As the script does, the head is read only when something could be handed out.
      if (left >= permits && this.liveHead(keys, now, left, waiterLease) === undefined) {
        this.keepLimit(keys, now + ttl, now);
        return { acquired: true, fencingToken: this.take(keys, token, permits, ttl, now) };
      }
    }
    let joined = false;
    if (enqueue) {
      joined = joinQueue(this.data.waiting, keys.queue, member, now, waiterLease);
      // As the script's `:queued` mark, written by the first waiter's call.
      liveValue(this.data.waiting, keys.queue, now)!.waiterLease ??= waiterLease;
      this.keepLimit(keys, now + 2 * waiterLease, now);
    }
    return { acquired: false, pttl: soonest, fence: liveValue(this.data.fences, keys.fence, now) ?? 0, joined };
  }

  async release(keys: SemaphoreKeys, token: string, waiterLease: number): Promise<SemaphoreReleaseReply> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    // The permit key names its token: gone (its lease ran out), the entry goes too, as the Lua's,
    // and the permits it counted go to waiters queued for them, as from a release.
    const released = liveValue(this.data.locks, keys.lock, this.clock.now()) === token;
    // Neither permit nor entry (a count dropped it, and its call handed the permits on): the
    // script's fast part answers at once, granting nobody, and so does this.
    if (!released && liveValue(this.data.semaphoreHolders, keys.semaphore.holders, now)?.has(token) !== true) return { released: false, grants: [] };
    if (released) this.data.locks.delete(keys.lock);
    this.deleteHolder(keys, token);
    const grants = this.grantFitting(keys, this.freePermits(keys, this.limitInUse(keys), now).free, waiterLease, now);
    this.forgetLimitIfIdle(keys);
    return { released, grant: grants[0], grants };
  }

  async leave(keys: SemaphoreKeys, token: string, ttl: number, waiterLease: number): Promise<void> {
    await settled(this.data, this.clock);
    const now = this.clock.now();
    this.remove(keys, `${token}:${ttl}:${keys.semaphore.permits}`);
    if (liveValue(this.data.locks, keys.lock, this.clock.now()) === token) this.data.locks.delete(keys.lock);
    this.deleteHolder(keys, token);
    this.grantFitting(keys, this.freePermits(keys, this.limitInUse(keys), now).free, waiterLease, now);
    this.forgetLimitIfIdle(keys);
  }

  /**
   * The Lua `forget_permit`, for the store's renewals: a renewal of `permitKey` that found it gone
   * drops holder `token`'s entry, and hands the permits that freed to the waiters queued for them
   * (with the waiter lease they were queued with), as a release does, rather than leave them to
   * the waiters' next poll. Anything but a semaphore permit's key is left alone.
   */
  forgetPermit(permitKey: string, token: string, now: number): void {
    const suffix = SEMAPHORE_SUFFIXES.permit + token;
    if (!permitKey.endsWith(suffix)) return;
    const lock = permitKey.slice(0, -suffix.length);
    const holders = lock + SEMAPHORE_SUFFIXES.holders;
    if (liveValue(this.data.semaphoreHolders, holders, now)?.has(token) !== true) return;
    const limit = liveValue(this.data.semaphoreLimits, holders, now) ?? 0;
    // semaphoreKeys names everything after the lock and the fence: the mutex's queue names are not read.
    const names = { lock, fence: lock + LOCK_KEY_SUFFIXES.fence, queue: '', waiters: '', released: '' };
    const keys = semaphoreKeys(names, token, lock, limit, 0);
    this.deleteHolder(keys, token);
    const waiterLease = liveValue(this.data.waiting, keys.queue, now)?.waiterLease;
    if (waiterLease !== undefined) this.grantFitting(keys, this.freePermits(keys, limit, now).free, waiterLease, now);
    this.forgetLimitIfIdle(keys);
  }

  /** The Lua `mine`: granted already (by a release or by this call's grants), the lease restarts at ttl. */
  private mine(keys: SemaphoreKeys, token: string, ttl: number, now: number): SemaphoreAcquireReply | undefined {
    const held = liveValue(this.data.semaphoreHolders, keys.semaphore.holders, now)?.get(token);
    if (held === undefined) return undefined;
    this.data.locks.set(keys.lock, { value: token, expiresAt: now + ttl });
    outlive(this.data.semaphoreHolders, keys.semaphore.holders, now + ttl, now);
    outlive(this.data.semaphoreLimits, this.limitKey(keys), now + ttl, now);
    return { acquired: true, fencingToken: Number(held.split(':')[1]) };
  }

  /** The Lua `limit_in_use`: the stored limit while the semaphore is in use, else the call's. */
  private limitInUse(keys: SemaphoreKeys): number {
    return liveValue(this.data.semaphoreLimits, this.limitKey(keys), this.clock.now()) ?? keys.semaphore.limit;
  }

  /** The Lua `keep_limit`: the call's limit stored (unless stored: then it is the same), kept until at least `until`. */
  private keepLimit(keys: SemaphoreKeys, until: number, now: number): void {
    if (liveValue(this.data.semaphoreLimits, this.limitKey(keys), now) !== undefined) outlive(this.data.semaphoreLimits, this.limitKey(keys), until, now);
    else this.data.semaphoreLimits.set(this.limitKey(keys), { value: keys.semaphore.limit, expiresAt: until });
  }

  /** Where this twin keeps the limit (Redis keeps it in the holders hash's `:limit` field). */
  private limitKey(keys: SemaphoreKeys): string {
    return keys.semaphore.holders;
  }

  private permitKey(keys: SemaphoreKeys, token: string): string {
    return `${keys.semaphore.holders.slice(0, -':holders'.length)}:permit:${token}`;
  }

  /** The Lua `free_permits`: drops holders whose permit expired. */
  private freePermits(keys: SemaphoreKeys, limit: number, now: number): { free: number; soonest: number } {
    let used = 0;
    let soonest = -1;
    for (const [token, value] of liveValue(this.data.semaphoreHolders, keys.semaphore.holders, now) ?? []) {
      const permit = this.data.locks.get(this.permitKey(keys, token));
      if (permit === undefined || permit.expiresAt < now) {
        this.deleteHolder(keys, token);
        continue;
      }
      used += Number(value.split(':')[0]);
      const left = permit.expiresAt === Infinity ? -1 : Math.ceil(permit.expiresAt - now);
      if (soonest < 0 || (left >= 0 && left < soonest)) soonest = left;
    }
    return { free: limit - used, soonest };
  }

  private take(keys: SemaphoreKeys, token: string, permits: number, lease: number, now: number): number {
    this.data.locks.set(this.permitKey(keys, token), { value: token, expiresAt: now + lease });
    const fencingToken = this.nextFence(keys.fence, now);
    let holders = liveValue(this.data.semaphoreHolders, keys.semaphore.holders, now);
    if (holders === undefined) this.data.semaphoreHolders.set(keys.semaphore.holders, { value: (holders = new Map()), expiresAt: now + lease });
    holders.set(token, `${permits}:${fencingToken}`);
    outlive(this.data.semaphoreHolders, keys.semaphore.holders, now + lease, now);
    outlive(this.data.semaphoreLimits, this.limitKey(keys), now + lease, now);
    return fencingToken;
  }

  /** The Lua `grant_fitting`: FIFO, as long as the head's request fits. */
  private grantFitting(keys: SemaphoreKeys, free: number, grantMs: number, now: number): Grant[] {
    const grants: Grant[] = [];
    for (;;) {
      // Once every permit is held the script reads no head: a dead waiter there stays till a look that could serve it.
      if (free <= 0) break;
      const head = this.liveHead(keys, now, free, grantMs);
      if (head === undefined) break;
      const match = /^(.+):([1-9]\d*):([1-9]\d*)$/.exec(head);
      if (match !== null && Number(match[3]) > free) break;
      this.remove(keys, head);
      if (match === null) continue;
      const [, token, ttl, permits] = match as unknown as [string, string, string, string];
      free -= Number(permits);
      const fencingToken = this.take(keys, token, Number(permits), Math.min(Number(ttl), grantMs), now);
      const message = `${token}:${fencingToken}`;
      // Messages reach subscribers after the script's reply, as they do over a second connection.
      setImmediate(() => this.publish(keys.released, message));
      grants.push({ token, fencingToken });
    }
    return grants;
  }

  private forgetLimitIfIdle(keys: SemaphoreKeys): void {
    const now = this.clock.now();
    if (liveValue(this.data.semaphoreHolders, keys.semaphore.holders, now) === undefined && liveValue(this.data.waiting, keys.queue, now) === undefined) {
      this.data.semaphoreLimits.delete(this.limitKey(keys));
    }
  }

  private deleteHolder(keys: SemaphoreKeys, token: string): void {
    const holders = liveValue(this.data.semaphoreHolders, keys.semaphore.holders, this.clock.now());
    holders?.delete(token);
    // Like Redis, a hash with no fields left no longer exists.
    if (holders?.size === 0) this.data.semaphoreHolders.delete(keys.semaphore.holders);
  }

  /**
   * The Lua `live_head`: a waiter that lapsed less than `grace` ago and whose permits are not `free`
   * keeps its place. A place whose token holds already goes, as the script's `grant_fitting` drops it:
   * the script's fast paths can let a waiter in with its place still queued once the holders hash
   * was deleted from outside; here every call that lets a waiter in takes its place, so this only
   * keeps the two alike.
   */
  private liveHead(keys: SemaphoreKeys, now: number, free: number, grace: number): string | undefined {
    for (;;) {
      const head = liveHead(this.data.waiting, keys.queue, now, (member, aliveUntil) => aliveUntil + grace >= now && Number(/:([1-9]\d*)$/.exec(member)?.[1] ?? 0) > free);
      const token = head === undefined ? undefined : /^(.+):[1-9]\d*:[1-9]\d*$/.exec(head)?.[1];
      if (token === undefined || liveValue(this.data.semaphoreHolders, keys.semaphore.holders, now)?.has(token) !== true) return head;
      this.remove(keys, head!);
    }
  }

  private remove(keys: SemaphoreKeys, member: string): void {
    const queue = liveValue(this.data.waiting, keys.queue, this.clock.now());
    if (queue !== undefined) removeWaiter(this.data.waiting, keys.queue, queue, member);
  }

  private nextFence(fence: string, now: number): number {
    return nextFence(this.data, fence, now, this.fenceRetention, this.clock.epochNow?.() ?? Date.now());
  }

}
