// docs/locks.md ("Waiting"): "`waitTimeout`, the caller's AbortSignal and shutdown end a wait
// cleanly ... A wait that shutdown ends rejects with `LockNotAcquiredError`, its `cause` a
// `RedisLockError` saying that `LockService` shut down." (fix 14b76a2, so that a waiting @Locked
// route answers 503, not 500 and an error log.) Two calls that shutdown ended elsewhere than in
// Acquisition.giveUp, where the fix converted the shutdown reason, rejected with the bare
// shutdown RedisLockError: no LockNotAcquiredError, no key, no cause.
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError, type Lock, type LockService } from '../../lib/index.js';
import { LAST_ATTEMPT_GRACE_MS } from '../../lib/core/engine/waiter-timing.js';
import { blockRedis } from '../support/block-redis.js';
import { recordReleases } from '../support/mechanism.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

async function greedyHolder(locks: LockService, key: string): Promise<Lock> {
  const first = await locks.acquire(key);
  await first.release();
  return locks.acquire(key);
}

/** What `call` settled with, once `close` ran while it was in flight. */
async function settledAcrossClose(call: Promise<unknown>, close: () => Promise<void>): Promise<unknown> {
  const outcome = call.then(
    () => undefined,
    (error: unknown) => error,
  );
  await close();
  return outcome;
}

function expectShutDownRefusal(error: unknown): void {
  expect(error).toBeInstanceOf(RedisLockError);
  expect({ class: (error as Error).constructor.name, message: (error as Error).message }).toEqual({
    class: 'LockNotAcquiredError',
    message: expect.stringContaining('was not acquired: LockService shut down'),
  });
  expect(error).toBeInstanceOf(LockNotAcquiredError);
}

describe('a lock call in flight when the application closes', () => {
  const { url } = useOwnRedis();

  // A barging caller whose acquire() waits for a parking release's answer of the same process
  // (docs/locks.md, "FIFO or barging": the next barging acquire waits for the park's answer
  // "within its signal and waitTimeout") was ended by shutdown through LockManager.parked()
  // (replyWaits.end(shutdown reason)).
  it('an acquire() waiting behind a parking release rejects with LockNotAcquiredError (cause: shut down)', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: url(), fairness: 'barging' });
    const key = 's15f-park-shutdown';
    const held = await greedyHolder(app.locks, key);
    const releases = recordReleases(app.locks);
    const { ended } = await blockRedis(url(), LAST_ATTEMPT_GRACE_MS * 2);
    const releasing = held.release().catch(() => undefined);
    // The release went with a park request: the next barging acquire waits for its answer.
    expect(releases.releases.at(-1)!.park).toBeDefined();
    releases.stop();
    const error = await settledAcrossClose(app.locks.acquire(key, { waitTimeout: 20_000 }), () => app.close());
    await ended;
    await releasing;
    expectShutDownRefusal(error);
  });

  // `tryAcquire`: "a Redis error rejects". One whose attempt was on its way when app.close()
  // began was ended by shutdown too, and LockManager.tryAcquire rethrew that reason as is: a route
  // handler calling tryAcquire() answered 500 at every rolling deploy.
  it('a tryAcquire() whose attempt is on its way rejects with LockNotAcquiredError (cause: shut down), as acquire() does', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: url() });
    await app.locks.isLocked('s15f-try-warm'); // connection ready, scripts loaded
    const { ended } = await blockRedis(url(), LAST_ATTEMPT_GRACE_MS * 4);
    const error = await settledAcrossClose(app.locks.tryAcquire('s15f-try-shutdown'), () => app.close());
    await ended;
    expectShutDownRefusal(error);
  });
});
