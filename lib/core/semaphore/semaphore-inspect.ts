import { createHash } from 'node:crypto';
import type { LockRedisKeys } from '../keys/lock-key.js';
import type { LuaScript, RunScript } from '../stores/redis/drivers/redis-driver.js';
import { liveValue, settled, type MemoryData, type StoreClock } from '../stores/memory/memory-data.js';
import type { SemaphoreInspection, SemaphorePermitHolder } from '../../interfaces/lock-inspection.interface.js';
import { parseHolder } from '../engine/holder.js';

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

/** The semaphore's names next to a lock's (see `semaphoreKeys`): the holders hash, limit and waiters set. */
function names(base: LockRedisKeys): { holders: string; limit: string; waiters: string; queue: string; permit: (token: string) => string } {
  const root = base.lock;
  return { holders: `${root}:holders`, limit: `${root}:limit`, waiters: `${root}:sw`, queue: `${root}:sq`, permit: (token) => `${root}:permit:${token}` };
}

/**
 * Reads a semaphore without writing anything (the acquire and release scripts drop dead
 * holders; this only leaves them out). KEYS: holders hash, limit, waiters set; the permit keys
 * (`<holders without ':holders'>:permit:<token>`) share their slot. Returns
 * `{limit or '', waiters, {token, '<permits>:<fencing>', pttl, ...}}`.
 */
const SEMAPHORE_INSPECT_LUA = `
local base = string.sub(KEYS[1], 1, #KEYS[1] - #':holders')
local live = {}
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local left = redis.call('PTTL', base .. ':permit:' .. entries[i])
  if left ~= -2 then
    live[#live + 1] = entries[i]
    live[#live + 1] = entries[i + 1]
    live[#live + 1] = left
  end
end
return {redis.call('GET', KEYS[2]) or '', redis.call('ZCARD', KEYS[3]), live}
`;

const SEMAPHORE_INSPECT: LuaScript = { lua: SEMAPHORE_INSPECT_LUA, sha: createHash('sha1').update(SEMAPHORE_INSPECT_LUA).digest('hex') };

/** The semaphore of `base`'s key in Redis, in one read-only script call. */
export async function inspectSemaphoreInRedis(runScript: RunScript, base: LockRedisKeys): Promise<SemaphoreSnapshot | null> {
  const keys = names(base);
  const [limit, waiters, live] = (await runScript(SEMAPHORE_INSPECT, [keys.holders, keys.limit, keys.waiters], [])) as [string | Buffer, number, (string | number | Buffer)[]];
  const holders: SemaphoreHolderSnapshot[] = [];
  for (let i = 0; i + 2 < live.length; i += 3) {
    const snapshot = holderSnapshot(String(live[i]), String(live[i + 1]), Number(live[i + 2]));
    if (snapshot) holders.push(snapshot);
  }
  return snapshotOf(String(limit), Number(waiters), holders);
}

/** The same read on the in-memory store's keys (see `MemorySemaphores`). */
export async function inspectSemaphoreInMemory(data: MemoryData, clock: StoreClock, base: LockRedisKeys): Promise<SemaphoreSnapshot | null> {
  await settled();
  const keys = names(base);
  const now = clock.now();
  const holders: SemaphoreHolderSnapshot[] = [];
  for (const [token, value] of data.semaphoreHolders.get(keys.holders) ?? []) {
    const permit = data.locks.get(keys.permit(token));
    if (permit === undefined || permit.expiresAt < now) continue;
    const snapshot = holderSnapshot(token, value, permit.expiresAt === Infinity ? -1 : Math.ceil(permit.expiresAt - now));
    if (snapshot) holders.push(snapshot);
  }
  // The memory store keeps the queue's list and liveness set as one entry, under the list's name.
  const queue = liveValue(data.waiting, keys.queue, now);
  const limit = data.semaphoreLimits.get(keys.limit);
  return snapshotOf(limit === undefined ? '' : String(limit), queue?.aliveUntil.size ?? 0, holders);
}

function holderSnapshot(token: string, value: string, pttl: number): SemaphoreHolderSnapshot | undefined {
  const match = /^(\d+):(\d+)$/.exec(value);
  if (match === null) return undefined;
  return { token, permits: Number(match[1]), fencingToken: Number(match[2]), pttl };
}

function snapshotOf(limit: string, waiters: number, holders: SemaphoreHolderSnapshot[]): SemaphoreSnapshot | null {
  if (holders.length === 0 && waiters === 0) return null;
  return { limit: /^\d+$/.test(limit) ? Number(limit) : null, holders, waiters };
}

/** A semaphore's snapshot as `inspect()` reports it, with each holder read from its owner token. */
export function semaphoreInspection({ limit, holders, waiters }: SemaphoreSnapshot): SemaphoreInspection {
  let used = 0;
  const permitHolders = holders.map(({ token, permits, fencingToken, pttl }): SemaphorePermitHolder => {
    used += permits;
    const holder = parseHolder(token);
    return { permits, fencingToken, ttlMs: Math.max(0, pttl), ...(holder ? { holder } : {}) };
  });
  return { ...(limit === null ? {} : { limit }), used, holders: permitHolders, waiters };
}
