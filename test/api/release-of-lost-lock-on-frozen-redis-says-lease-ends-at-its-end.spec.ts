/**
 * Found by review (forty-third session). `release()` of a lock lost long before (its lease ran
 * out, the holder's code went on and released it at the end), called while its Redis is frozen,
 * rejected with "Redis did not answer the release of lock "k" by the end of its lease; the lease
 * ends on its own in Redis.": a lease that had ended before the release was sent, and nothing
 * left to end. The class stays `RedisUnansweredError`; the message now says the lease had ended
 * already and the lock was not held.
 */
import { describe, expect, it } from 'vitest';
import { RedisUnansweredError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useFrozenRedis } from '../support/frozen-redis.js';
import { settledRecord } from '../support/mechanism.js';

describe('release() of a lock lost before it, on a frozen Redis', () => {
  const frozen = useFrozenRedis();

  it('rejects with a RedisUnansweredError that says the lease had ended already', async () => {
    const app = frozen.opened(await createLockApp({ redis: frozen.url(), ttl: 300, autoRenew: false }));
    const lock = await app.locks.acquire('lost-release:k');
    // Lost by its lease's end: the sweeper says so, and Redis let the key expire.
    await expect.poll(() => lock.held, { timeout: 10_000 }).toBe(false);
    await expect.poll(() => app.locks.isLocked('lost-release:k'), { timeout: 10_000 }).toBe(false);
    frozen.server().pause();
    const release = settledRecord(lock.release());
    await expect.poll(() => release.settled, { timeout: 10_000 }).toBeDefined();
    const error = release.settled!.error as Error;
    expect(error).toBeInstanceOf(RedisUnansweredError);
    expect(error.message).toMatch(/did not answer the release of lock "lost-release:k"/);
    expect(error.message).not.toMatch(/by the end of its lease/);
    expect(error.message).toMatch(/lease had ended already/);
  });
});
