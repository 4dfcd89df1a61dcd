/**
 * Found by review (thirty-ninth session). `inspect()` listed a semaphore's holders in the order of
 * Redis' holders hash, which is no order at all once the hash outgrows its compact encoding (owner
 * tokens are longer than 64 bytes), and in the in-memory store's insertion order: the two stores
 * answered the same semaphore in different orders, and the lock board, which shows the first 20
 * holders, showed an arbitrary 20 of a busy semaphore. Holders are now listed oldest first (by
 * fencing token, which every acquisition raises), on every store.
 */
import { describe, expect, it } from 'vitest';
import type { Lock } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';

describe("inspect() of a semaphore's holders", () => {
  for (const store of useBothStores()) {
    it(`lists them oldest first, by fencing token (${store.label})`, async () => {
      const { locks } = await store.open();
      const key = uniqueKey('inspect-semaphore-order');
      const taken: Lock[] = [];
      for (let i = 0; i < 30; i++) taken.push(await locks.acquire(key, { limit: 40, label: `holder ${i}` }));
      // Holders leave and come back, so insertion order and token order part ways.
      for (const lock of taken.splice(0, 10)) await lock.release();
      for (let i = 30; i < 40; i++) taken.push(await locks.acquire(key, { limit: 40, label: `holder ${i}` }));

      const { semaphore } = await locks.inspect(key);
      const tokens = semaphore!.holders.map((holder) => holder.fencingToken);
      expect(tokens).toHaveLength(30);
      expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
      expect(semaphore!.holders[0]!.holder?.label).toBe('holder 10');
      for (const lock of taken) await lock.release();
    });
  }
});
