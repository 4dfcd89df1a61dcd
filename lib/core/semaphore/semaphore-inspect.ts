import type { LockRedisKeys } from '../keys/lock-key.js';
import type { ReadCommand } from '../stores/redis/drivers/redis-driver.js';
import { liveValue, settled, type MemoryData, type StoreClock } from '../stores/memory/memory-data.js';
import type { SemaphoreInspection, SemaphorePermitHolder } from '../../interfaces/lock-inspection.interface.js';
import { parseHolder } from '../engine/holder.js';
import { SEMAPHORE_SUFFIXES } from './semaphore-keys.js';
import { leaseLeft } from '../engine/lease-left.js';

/** One live holder of a semaphore's permits. */
export interface SemaphoreHolderSnapshot {
  /** The owner token (its permit key's value). */
  token: string;
  permits: number;
  fencingToken: number;
  /** Milliseconds left on its permit (-1: no expiry). */
  pttl: number;
}

/** What Redis holds for the semaphore of one key: `null` when it has neither holders nor waiters. */
export interface SemaphoreSnapshot {
  /** The stored limit, `null` when none is stored. */
  limit: number | null;
  holders: SemaphoreHolderSnapshot[];
  waiters: number;
}

/** The semaphore's names next to a lock's (see `semaphoreKeys`): the holders hash and waiters set. */
function names(base: LockRedisKeys): { holders: string; waiters: string; queue: string; permit: (token: string) => string } {
  const root = base.lock;
  return { holders: root + SEMAPHORE_SUFFIXES.holders, waiters: root + SEMAPHORE_SUFFIXES.waiters, queue: root + SEMAPHORE_SUFFIXES.queue, permit: (token) => root + SEMAPHORE_SUFFIXES.permit + token };
}

/** Runs read-only commands on keys of one slot in one round trip (`RedisDriver.read`). */
export type ReadKeys = (commands: readonly ReadCommand[]) => Promise<unknown[]>;

/**
 * The semaphore of `base`'s key in Redis, with plain reads (so that an ACL allowing only reads
 * is enough, as for the lock's own `inspect()`): HGETALL of the holders hash (which keeps the
 * limit in its `:limit` field) and ZCARD of the waiters, then one PTTL per holder's permit (of
 * the hash for a holder alone, see LONE in `semaphore-lua.ts`), two round trips. Holders whose permit key is gone (crashed) are left out, as the scripts would
 * drop them; nothing is written. Not atomic: a snapshot anyway.
 */
export async function inspectSemaphoreInRedis(read: ReadKeys, base: LockRedisKeys): Promise<SemaphoreSnapshot | null> {
  const keys = names(base);
  const [flat, waiters] = (await read([
    ['HGETALL', keys.holders],
    ['ZCARD', keys.waiters],
  ])) as [unknown[], unknown];
  const entries: [string, string][] = [];
  let limit = '';
  let lone = false;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = String(flat[i]);
    const value = String(flat[i + 1]);
    // A holder alone: `!<token>` -> `<permits>:<limit>:<fencing>`, its lease the hash's (see LONE
    // in semaphore-lua.ts). Fields starting with ':' are the semaphore's own (`:limit`, `:used`):
    // no token has a ':'.
    const alone = field.startsWith('!') ? /^(\d+):(\d+):(\d+)$/.exec(value) : null;
    if (alone !== null) {
      lone = true;
      limit = alone[2]!;
      entries.push([field.slice(1), `${alone[1]}:${alone[3]}`]);
    } else if (field === ':limit') limit = value;
    else if (!field.startsWith(':') && !field.startsWith('!')) entries.push([field, value]);
  }
  const pttls = entries.length === 0 ? [] : await read(entries.map(([token]) => ['PTTL', lone ? keys.holders : keys.permit(token)] as const));
  const holders: SemaphoreHolderSnapshot[] = [];
  entries.forEach(([token, value], i) => {
    const pttl = Number(pttls[i]);
    if (pttl === -2) return;
    const snapshot = holderSnapshot(token, value, pttl);
    if (snapshot) holders.push(snapshot);
  });
  return snapshotOf(limit, Number(waiters), holders);
}

/** The same read on the in-memory store's keys (see `MemorySemaphores`). */
export async function inspectSemaphoreInMemory(data: MemoryData, clock: StoreClock, base: LockRedisKeys): Promise<SemaphoreSnapshot | null> {
  await settled(data, clock);
  const keys = names(base);
  const now = clock.now();
  const holders: SemaphoreHolderSnapshot[] = [];
  for (const [token, value] of liveValue(data.semaphoreHolders, keys.holders, now) ?? []) {
    const permit = data.locks.get(keys.permit(token));
    if (permit === undefined || permit.expiresAt < now) continue;
    const snapshot = holderSnapshot(token, value, permit.expiresAt === Infinity ? -1 : Math.ceil(permit.expiresAt - now));
    if (snapshot) holders.push(snapshot);
  }
  // The memory store keeps the queue's list and liveness set as one entry, under the list's name.
  const queue = liveValue(data.waiting, keys.queue, now);
  // The memory twin keeps the limit in a map of its own, under the holders' name.
  const limit = liveValue(data.semaphoreLimits, keys.holders, now);
  return snapshotOf(limit === undefined ? '' : String(limit), queue?.aliveUntil.size ?? 0, holders);
}

function holderSnapshot(token: string, value: string, pttl: number): SemaphoreHolderSnapshot | undefined {
  const match = /^(\d+):(\d+)$/.exec(value);
  if (match === null) return undefined;
  return { token, permits: Number(match[1]), fencingToken: Number(match[2]), pttl };
}

/**
 * Holders oldest first, by fencing token (every acquisition raises it): Redis' hash keeps no order
 * once its fields outgrow the compact encoding, and the memory store keeps insertion order, so the
 * stores would list one semaphore differently, and the board's first holders would be any.
 */
function snapshotOf(limit: string, waiters: number, holders: SemaphoreHolderSnapshot[]): SemaphoreSnapshot | null {
  if (holders.length === 0 && waiters === 0) return null;
  holders.sort((a, b) => a.fencingToken - b.fencingToken);
  return { limit: /^\d+$/.test(limit) ? Number(limit) : null, holders, waiters };
}

/** A semaphore's snapshot as `inspect()` reports it, with each holder read from its owner token. */
export function semaphoreInspection({ limit, holders, waiters }: SemaphoreSnapshot): SemaphoreInspection {
  let used = 0;
  const permitHolders = holders.map(({ token, permits, fencingToken, pttl }): SemaphorePermitHolder => {
    used += permits;
    const holder = parseHolder(token);
    return { permits, fencingToken, ttlMs: leaseLeft(pttl), ...(holder ? { holder } : {}) };
  });
  return { ...(limit === null ? {} : { limit }), used, holders: permitHolders, waiters };
}
