/**
 * Found by review (thirty-eighth session). A FIFO mutex caller or a reader of a key does not take
 * a lock its process parked (LockParking: a greedy barging key's release hands the lock in Redis
 * to a park token of the process); a parked lock is freed before their attempt (acae7ec). But a
 * call made while the parking release was still on its way went out at once, behind that release
 * on the connection: the release parked the lock, the attempt found it held under the park token,
 * and a `tryAcquire()` answered null although nobody held the key (the parked lock was freed for
 * nobody at the end of the turn); an `acquire()` queued behind it. A barging caller waits for
 * that release's answer; so do they now, and the parked lock is freed before they ask.
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

describe('a caller of a key whose parking release is on its way, that does not take parked locks', () => {
  const redis = useRedis();
  const app = useLockApps();

  /** Releases the greedy holder (a parking release) and calls `call` while that release is on its way. */
  async function whileParking(key: string, call: (locks: LockService) => Promise<Lock | null>) {
    const { locks } = await app({ ttl: 30_000 });
    // A read lock taken once before: the read scripts' settings are known, and a reader's attempt goes out at once.
    await (await locks.acquire(`${key}-warm`, { mode: 'read' })).release();
    const releases = recordReleases(locks);
    const holder = await greedyHolder(locks, key);
    const released = holder.release();
    const got = call(locks);
    await released;
    const parked = releases.releases.at(-1)!;
    const lock = await got;
    const owner = await redis.get(`lock:{${key}}`);
    await lock?.release();
    releases.stop();
    return { parking: parked.park !== undefined, got: lock === null ? null : 'lock', heldBy: owner === parked.park ? 'park token' : owner === null ? 'nobody' : 'the caller' };
  }

  it('a FIFO tryAcquire() gets the lock nobody holds', async () => {
    // Failed before the fix: { parking: true, got: null, heldBy: 'park token' } (or 'nobody').(or 'nobody' once the turn freed it for nobody).
    expect(await whileParking('parking-fifo-try', (locks) => locks.tryAcquire('parking-fifo-try'))).toEqual({ parking: true, got: 'lock', heldBy: 'the caller' });
  });

  it("a reader's tryAcquire() gets the read lock", async () => {
    // Failed before the fix: { parking: true, got: null, heldBy: 'park token' } (or 'nobody').
    expect(await whileParking('parking-read-try', (locks) => locks.tryAcquire('parking-read-try', { mode: 'read' }))).toEqual({ parking: true, got: 'lock', heldBy: 'the caller' });
  });
});
