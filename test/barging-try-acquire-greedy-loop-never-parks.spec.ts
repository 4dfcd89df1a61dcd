/**
 * Found by review (thirty-eighth session). A process whose callers take a barging mutex again in
 * the turn its release came back parks it (LockParking): its next releases hand the lock to a
 * park token of the process, and its next caller takes it without a round trip. The lock a
 * `tryAcquire()` took from Redis was never marked as one that parks (`HeldLock.parks`, set for
 * an `acquire()` by its acquisition and for a parked lock by the parking, since FIFO locks stopped
 * parking): a greedy loop of `tryAcquire()` calls, marked greedy all the same, sent a plain
 * release and an acquire attempt per round, two script calls where docs/locks.md promises one.
 * Now a barging lock taken by `tryAcquire()` parks as one taken by `acquire()` does.
 */
import { describe, expect, it } from 'vitest';
import type { Lock } from '../lib/index.js';
import { countAttempts, recordReleases } from './support/mechanism.js';
import { sleep } from './support/lock-app.js';
import { uniqueKey, useBothStores } from './support/both-stores.js';

describe('a greedy loop of barging tryAcquire() calls', () => {
  for (const store of useBothStores()) {
    it(`parks the lock as a loop of acquire() calls does: one release script call per round, no attempt (${store.label})`, async () => {
      const { locks } = await store.open({ fairness: 'barging', ttl: 30_000 });
      const other = await store.open({ fairness: 'barging', ttl: 30_000 });
      const k = uniqueKey('try-loop');
      let held: Lock = (await locks.tryAcquire(k))!;
      const attempts = countAttempts(locks);
      const releases = recordReleases(locks);
      const tokens = [held.fencingToken];
      for (let round = 0; round < 10; round++) {
        await held.release();
        // In the turn the release came back: a greedy caller.
        held = (await locks.tryAcquire(k))!;
        expect(held?.held).toBe(true);
        tokens.push(held.fencingToken);
        expect(await other.locks.tryAcquire(k)).toBeNull();
      }
      // The first release was a plain one (the loop was not known yet); every later one parked,
      // and only the tryAcquire() after the first release asked the store. Before the fix: no
      // release parked, and every round made an attempt (10).
      expect(releases.releases.map((release) => release.parked)).toEqual([false, ...Array(9).fill(true)]);
      expect(attempts.count).toBe(1);
      expect(tokens.slice(1).map((token, i) => token - tokens[i]!)).toEqual(Array(10).fill(1));
      await held.release();
      // Nobody of this process asked again: the parked lock is freed, nothing is left held.
      while (await other.locks.isLocked(k)) await sleep(1);
      attempts.stop();
      releases.stop();
    });
  }
});
