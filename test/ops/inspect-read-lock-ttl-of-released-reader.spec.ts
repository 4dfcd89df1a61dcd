/**
 * Found by review (thirty-second session, read-write and multi-key locks). `inspect()` of a key
 * held by readers reports as `ttlMs` the PTTL of the lock key's `~r` value, which expires with the
 * longest reader lease it ever guarded (docs/redis-data.md) and is never shortened when that reader
 * leaves. Once a reader with a long lease has released, `ttlMs` (and the lock board's "expires in")
 * goes on showing that reader's lease: a read lock whose one reader left runs on a 2 s lease reads
 * as 30 s of lease left, although it frees as soon as that reader's 2 s lease runs out unrenewed
 * (LockInspection.ttlMs: "Milliseconds until the lease expires unless renewed"). The readers'
 * own leases are read already (the PTTL of each, to tell whether one is left).
 */
import { describe, expect, it } from 'vitest';
import { uniqueKey, useBothStores } from '../support/both-stores.js';

describe('inspect() of a read lock after its longest-lease reader released', () => {
  for (const store of useBothStores()) {
    it(`reports the lease of the readers left, not of one gone (${store.label})`, async () => {
      const { locks } = await store.open();
      const key = uniqueKey('inspect-read-ttl');
      const long = await locks.acquire(key, { mode: 'read', ttl: 30_000 });
      const short = await locks.acquire(key, { mode: 'read', ttl: 2_000 });
      await long.release();
      const inspection = await locks.inspect(key);
      expect(inspection.held).toBe(true);
      // The reader left renews a 2 s lease: that is the most the lock has left unless renewed.
      expect(inspection.ttlMs).toBeLessThanOrEqual(2_000);
      await short.release();
      expect((await locks.inspect(key)).held).toBe(false);
    });
  }
});
