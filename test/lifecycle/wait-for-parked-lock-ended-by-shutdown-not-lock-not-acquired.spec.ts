// docs/locks.md (14b76a2): "`waitTimeout`, the caller's `AbortSignal` and shutdown end a wait
// cleanly ... A wait that shutdown ends rejects with `LockNotAcquiredError`, its `cause` a
// `RedisLockError` saying that `LockService` shut down", and "Busy over HTTP": 503 "when the
// application closed while the request waited", not a 500.
//
// What happens: the fix converts the error in Acquisition (lib/core/engine/acquisition.ts:446)
// only. A caller of a barging mutex whose release this process sent with a park request waits
// first for that release's answer (LockManager.parked(), lib/core/engine/lock-manager.ts:322),
// through replyWaits.wait(); stop() ends every reply wait with the bare shutdown reason
// (lock-manager.ts:588, `this.replyWaits.end(this.shutdown.signal.reason)`), and parked()
// rethrows it as is: the caller gets the plain RedisLockError "LockService shut down ... while
// waiting for a lock." (a 500 and an error log through the interceptor), not LockNotAcquiredError.
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError, type Lock, type LockService } from '../../lib/index.js';
import { blockRedis } from '../support/block-redis.js';
import { recordReleases } from '../support/mechanism.js';
import { useLockApps } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

async function greedyHolder(locks: LockService, key: string): Promise<Lock> {
  const first = await locks.acquire(key);
  await first.release();
  return locks.acquire(key);
}

describe('a caller waiting for its process’ parking release when the application closes', () => {
  const { url } = useOwnRedis();
  const app = useLockApps();

  it('rejects with LockNotAcquiredError (cause: LockService shut down), as any wait shutdown ends', { timeout: 30_000 }, async () => {
    const created = await app({ redis: url(), fairness: 'barging', shutdownTimeout: 500 });
    const { locks } = created;
    const key = 's15g-park-shutdown';
    const held = await greedyHolder(locks, key);
    const releases = recordReleases(locks);
    const { ended } = await blockRedis(url(), 3_000);
    const releasing = held.release().catch(() => undefined);
    // Mechanism: the release went out with a park request, so the next caller waits for its answer.
    expect(releases.releases.at(-1)!.park).toBeDefined();
    releases.stop();
    const waiting = locks.acquire(key, { waitTimeout: 20_000 }).then(
      (lock) => lock,
      (error: unknown) => error,
    );
    await created.close();
    const outcome = await waiting;
    await ended;
    await releasing;
    expect(outcome).toBeInstanceOf(RedisLockError);
    expect((outcome as Error).message).toMatch(/shut down/);
    // Today: a plain RedisLockError('LockService shut down (the application is closing) while waiting for a lock.').
    expect(outcome).toBeInstanceOf(LockNotAcquiredError);
    expect(((outcome as Error).cause as Error | undefined)?.message).toMatch(/LockService shut down/);
  });
});
