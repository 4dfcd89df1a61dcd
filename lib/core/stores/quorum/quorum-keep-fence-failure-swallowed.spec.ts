import { describe, expect, it } from 'vitest';
import type { LockScripts } from '../redis/lock-scripts.js';
import { QuorumStore } from './quorum-store.js';

/**
 * Found by review (twenty-ninth session): HeldLock.keepFence (held-lock.ts) pushes the fencing counter's expiry on every third of
 * `fenceRetention`, and "a failure leaves the counter to the next renewal's try": it resets
 * `fenceKeptAt` when the store's keepFence rejects. QuorumStore.keepFence settles every node with
 * `Promise.allSettled` and always resolves, so a push that reached no master at all reads as
 * done, and the next one comes a third of the retention later instead of at the next renewal.
 */
describe('QuorumStore.keepFence', () => {
  it('rejects when no master (not even a majority) pushed the counter on', async () => {
    const nodes = [0, 1, 2].map(() => ({ keepFence: () => Promise.reject(new Error('Connection is closed.')) }) as unknown as LockScripts);
    // Before: resolves.
    await expect(new QuorumStore(nodes).keepFence('lock:{k}:fence')).rejects.toThrow();
  });
});
