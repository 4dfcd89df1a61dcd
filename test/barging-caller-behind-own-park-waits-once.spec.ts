/**
 * A caller of a process whose greedy loop parks a barging lock, asking while the loop's parking
 * release is on its way, waits for that release's answer (LockParking.asking: `inFlight.answered`)
 * and then asks again. The loop's own caller takes the parked lock first (it runs a few
 * microtasks sooner), and with a critical section without I/O it has released again, with a new
 * park request, before the caller asks again: the caller waits for that one too, and so on. Each
 * of those waits is bounded on its own (by the rest of the waitTimeout, but at least
 * LAST_ATTEMPT_GRACE_MS), never in all: the caller never reaches Redis (so it never says it
 * waits, and the streak bound, which counts barging waiters in Redis, never ends the loop's
 * streak), its waitTimeout is not kept, and a tryAcquire() ("no waiting") waits as long as the
 * loop runs. docs/locks.md: the caller "waits for that answer within its signal and
 * waitTimeout ... if it must then wait for the lock, it has what is left of its waitTimeout".
 */
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, type Lock, type LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import type { LockRunner } from '../lib/core/engine/locked-call.js';
import { countAttempts, recordReleases } from './support/mechanism.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/** Runs a greedy loop on `key` (no I/O inside the lock: a counter) until `stop()`. */
function greedyLoop(locks: LockService, key: string) {
  let stopped = false;
  const loop = { rounds: 0, done: Promise.resolve() };
  loop.done = (async () => {
    while (!stopped) {
      const lock = await locks.acquire(key);
      loop.rounds++;
      await lock.release();
    }
  })();
  return {
    get rounds() {
      return loop.rounds;
    },
    async stop() {
      stopped = true;
      await loop.done;
    },
  };
}

describe('a caller of the greedy process that asks while its parking release is on its way', () => {
  useRedis();
  const app = useLockApps();

  async function scenario(key: string, call: (locks: LockService) => Promise<unknown>) {
    const { locks } = await app({ fairness: 'barging', ttl: 30_000 });
    const releases = recordReleases(locks);
    const loop = greedyLoop(locks, key);
    await expect.poll(() => releases.releases.filter((release) => release.parked).length).toBeGreaterThan(5);
    const attempts = countAttempts(locks);
    // The loop holds the lock only between two microtasks: the call lands while a park is on its way.
    let outcome = 'pending';
    void call(locks).then(
      (lock) => {
        outcome = lock === null ? 'busy' : 'acquired';
        return (lock as { release?: () => Promise<void> } | null)?.release?.();
      },
      (error: unknown) => (outcome = error instanceof LockNotAcquiredError ? 'not acquired' : String(error)),
    );
    const roundsAtCall = loop.rounds;
    // 2,000 more rounds of the loop: each a release round trip, far past the call's bounds.
    await expect.poll(() => loop.rounds - roundsAtCall, { timeout: 60_000, interval: 5 }).toBeGreaterThan(2_000);
    const seen = { outcome, attemptsOfTheCaller: attempts.count };
    await loop.stop();
    releases.stop();
    attempts.stop();
    return seen;
  }

  it('acquire(): keeps its waitTimeout (or gets the lock), instead of waiting for each next park of the loop', async () => {
    const seen = await scenario('park-in-process-acquire', (locks) => locks.acquire('park-in-process-acquire', { waitTimeout: 50 }));
    // Failed before the fix: { outcome: 'pending', attemptsOfTheCaller: 0 }.
    expect(seen.outcome === 'pending' ? seen : 'settled').toBe('settled');
    expect(seen.attemptsOfTheCaller).toBeGreaterThan(0);
  }, 90_000);

  it('tryAcquire(): answers (the lock or null), instead of waiting for each next park of the loop', async () => {
    const seen = await scenario('park-in-process-try', (locks) => locks.tryAcquire('park-in-process-try'));
    // Failed before the fix: { outcome: 'pending', attemptsOfTheCaller: 0 }.
    expect(seen.outcome === 'pending' ? seen : 'settled').toBe('settled');
  }, 90_000);

  it('a @Locked call (acquireThen): keeps its waitTimeout (or gets the lock)', async () => {
    const key = 'park-in-process-locked';
    const seen = await scenario(key, (locks) => {
      const runner = locks[LOCK_RUNNER] as LockRunner;
      return new Promise<Lock>((resolve, reject) => runner.acquireThen!(key, { waitTimeout: 50 }, resolve, reject));
    });
    // Failed before the fix: { outcome: 'pending', attemptsOfTheCaller: 0 }.
    expect(seen.outcome === 'pending' ? seen : 'settled').toBe('settled');
  }, 90_000);
});
