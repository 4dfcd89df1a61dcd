import type { Entry, MemoryData } from '../../lib/core/stores/memory/memory-data.js';
import type { MemoryStore } from '../../lib/core/stores/memory/memory-store.js';

/** Keys one store call looks at, at most (`SWEEP_STEP` of lib/core/stores/memory/memory-sweep.ts, or more). */
const KEYS_PER_CALL = 20;
/** A key no lock of the simulation uses: the calls read nothing but it. */
const UNUSED_KEY = 'explore:expiry-check';

/**
 * Keys of `data` whose time was out at `now` that the store still holds after a round of store
 * calls has looked at each of them: none, as Redis' active expiry drops a key nobody reads again
 * (docs/testing.md: the in-memory store drops them a few at each call, 26d7d91). Until then a
 * process locking ever new keys held every fencing counter past its retention and every crashed
 * holder's and lapsed waiter's key for its life. Virtual time stands still meanwhile, and nothing
 * but these calls reads the keys (a read drops an expired key too, so the checks that read every
 * key must come after).
 */
export async function expiredKeysKept(data: MemoryData, store: MemoryStore, now: number): Promise<string[]> {
  const maps = keyspace(data);
  const keys = maps.reduce((sum, [, map]) => sum + map.size, 0);
  // One call may end the round it is in; the round after it looks at every key.
  for (let call = 0; call < Math.ceil(keys / KEYS_PER_CALL) + 2; call++) await store.exists(UNUSED_KEY);
  const kept: string[] = [];
  for (const [name, map] of maps) for (const [key, entry] of map) if (entry.expiresAt < now) kept.push(`${name} ${key} (expired at ${entry.expiresAt} ms)`);
  return kept;
}

function keyspace(data: MemoryData): [string, Map<string, Entry<unknown>>][] {
  return [
    ['lock', data.locks],
    ['fence', data.fences],
    ['queue', data.waiting],
    ['semaphore holders', data.semaphoreHolders],
    ['semaphore limit', data.semaphoreLimits],
    ['readers', data.readers],
    ['wanted', data.wanted],
  ];
}
