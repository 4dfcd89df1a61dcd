/**
 * A lock parked for this process (LockParking: a greedy barging key's release hands the lock in
 * Redis to a park token of the process, freed at the end of the turn if no barging caller took
 * it) was kept from the process' own callers of the key that do not take parked locks: a FIFO
 * mutex caller, a reader. Their attempt, sent in the turn of the release, found the lock held
 * under the park token, and a `tryAcquire()` answered null although nobody held the lock (it was
 * freed a moment later, taken by nobody); an `acquire()` queued behind it. A barging caller with
 * another ttl, which cannot take the parked lock either, has it freed first (`asking`): so now
 * do these. Found by review.
 */
import { describe, expect, it } from 'vitest';
import type { Lock, LockService } from '../lib/index.js';
import { recordReleases } from './support/mechanism.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/** A greedy barging caller of `key`: two rounds, so that its next release parks. */
async function greedyHolder(locks: LockService, key: string): Promise<Lock> {
  const first = await locks.acquire(key, { fairness: 'barging' });
  await first.release();
  return locks.acquire(key, { fairness: 'barging' });
}

describe('a caller of a key its own process has just parked, that does not take parked locks', () => {
  const redis = useRedis();
  const app = useLockApps();

  /** Parks `key` (the greedy holder's release), then calls `call` in the turn the release came back. */
  async function afterPark(key: string, call: (locks: LockService) => Promise<Lock | null>) {
    const { locks } = await app({ ttl: 30_000 });
    // A read lock taken once before: the read scripts' settings are known, and a reader's attempt goes out at once.
    await (await locks.acquire(`${key}-warm`, { mode: 'read' })).release();
    const releases = recordReleases(locks);
    await (await greedyHolder(locks, key)).release();
    expect(releases.releases.at(-1)!.parked).toBe(true);
    const parkToken = releases.releases.at(-1)!.park;
    const lock = await call(locks);
    const owner = await redis.get(`lock:{${key}}`);
    await lock?.release();
    releases.stop();
    return { got: lock === null ? null : 'lock', heldBy: owner === parkToken ? 'park token' : owner === null ? 'nobody' : 'the caller' };
  }

  it('control: a barging caller with another ttl gets the lock (the parked one is freed first)', async () => {
    expect(await afterPark('park-other-ttl-try', (locks) => locks.tryAcquire('park-other-ttl-try', { fairness: 'barging', ttl: 20_000 }))).toEqual({ got: 'lock', heldBy: 'the caller' });
  });

  it('a FIFO tryAcquire() gets the lock nobody holds', async () => {
    // Failed before the fix: { got: null, heldBy: 'nobody' } (refused, then the lock was freed for nobody).
    expect(await afterPark('park-fifo-try', (locks) => locks.tryAcquire('park-fifo-try'))).toEqual({ got: 'lock', heldBy: 'the caller' });
  });

  it("a reader's tryAcquire() gets the read lock", async () => {
    // Failed before the fix: { got: null, heldBy: 'nobody' }.
    expect(await afterPark('park-read-try', (locks) => locks.tryAcquire('park-read-try', { mode: 'read' }))).toMatchObject({ got: 'lock' });
  });
});
