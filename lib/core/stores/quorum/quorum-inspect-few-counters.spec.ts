import { describe, expect, it } from 'vitest';
import type { LockScripts } from '../redis/lock-scripts.js';
import type { LockSnapshot, ScriptKeys } from '../lock-store.js';
import { QuorumStore } from './quorum-store.js';

/**
 * Found by review (twenty-ninth session): `inspect()` said of a free lock with fewer counters
 * than a majority left (lost in restarts, masters silent) that its latest token was the lowest
 * of them, where its comment said the highest. Which one the latest acquisition had, the
 * answers cannot tell; reported is the upper bound, never below a token handed out.
 */
describe('QuorumStore.inspect: fewer counters than a majority', () => {
  it('reports the highest counter left, not the lowest', async () => {
    // Five masters: three answer, of which one lost the counter (restarted empty); two are silent.
    const snapshots: (LockSnapshot | undefined)[] = [
      { owner: null, pttl: -2, fencingToken: null, waiters: 0 },
      { owner: null, pttl: -2, fencingToken: 10, waiters: 0 },
      { owner: null, pttl: -2, fencingToken: 7, waiters: 0 },
      undefined,
      undefined,
    ];
    const nodes = snapshots.map(
      (snapshot) => ({ inspect: () => (snapshot === undefined ? Promise.reject(new Error('down')) : Promise.resolve(snapshot)) }) as unknown as LockScripts,
    );
    const seen = await new QuorumStore(nodes).inspect({ lock: 'k' } as ScriptKeys);
    // Before: 7.
    expect(seen.fencingToken).toBe(10);
  });
});
