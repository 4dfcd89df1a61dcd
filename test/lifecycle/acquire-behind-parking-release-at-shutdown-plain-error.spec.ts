// docs/locks.md ("Waiting"): "`waitTimeout`, the caller's AbortSignal and shutdown end a wait
// cleanly ... A wait that shutdown ends rejects with `LockNotAcquiredError`, its `cause` a
// `RedisLockError` saying that `LockService` shut down." (fix 14b76a2, so that a waiting @Locked
// route answers 503, not 500 and an error log.)
//
// What happens: a barging caller whose acquire() waits for a parking release's answer of the same
// process (docs/locks.md, "FIFO or barging": the next barging acquire waits for the park's
// answer "within its signal and waitTimeout") is ended by shutdown through LockManager.parked()
// (replyWaits.end(shutdown reason)), which is outside Acquisition.giveUp, where the fix converts
// the shutdown reason. acquire() rejects with the bare shutdown RedisLockError: no
// LockNotAcquiredError, no key, no cause.
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError, type Lock, type LockService } from '../../lib/index.js';
import { LAST_ATTEMPT_GRACE_MS } from '../../lib/core/engine/waiter-timing.js';
import { blockRedis } from '../support/block-redis.js';
import { recordReleases } from '../support/mechanism.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

const BLOCK_MS = LAST_ATTEMPT_GRACE_MS * 2;

async function greedyHolder(locks: LockService, key: string): Promise<Lock> {
  const first = await locks.acquire(key);
  await first.release();
  return locks.acquire(key);
}

describe('an acquire() waiting behind a parking release when the application closes', () => {
  const { url } = useOwnRedis();

  it('rejects with LockNotAcquiredError (cause: shut down), as every wait shutdown ends', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: url(), fairness: 'barging' });
    const key = 's15f-park-shutdown';
    const held = await greedyHolder(app.locks, key);
    const releases = recordReleases(app.locks);
    const { ended } = await blockRedis(url(), BLOCK_MS);
    const releasing = held.release().catch(() => undefined);
    // The release went with a park request: the next barging acquire waits for its answer.
    expect(releases.releases.at(-1)!.park).toBeDefined();
    releases.stop();
    const waiting = app.locks.acquire(key, { waitTimeout: 20_000 }).then(
      (lock) => ({ lock }),
      (error: unknown) => ({ error }),
    );
    await app.close();
    const outcome = await waiting;
    await ended;
    await releasing;
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(error).toBeInstanceOf(RedisLockError);
    expect({ class: (error as Error).constructor.name, message: (error as Error).message }).toEqual({
      class: 'LockNotAcquiredError',
      message: expect.stringContaining('was not acquired: LockService shut down'),
    });
    expect(error).toBeInstanceOf(LockNotAcquiredError);
  });
});
