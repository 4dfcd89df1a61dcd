/**
 * Review of d4beb2c (bounded release): app.close() while a release is waiting for a frozen Redis
 * (SIGSTOP). The lease is long (30 s), so the release's own bound is far; close() must still end
 * within shutdownTimeout, and the release() its caller awaits must settle (close() stops the
 * deadline sweeper, which was the only bound on that wait). Both hold; but the release() then
 * rejects with ioredis' raw "Connection is closed." (an Error naming no lock), where a release
 * of a lock lost before close resolves (a52c85c) and the library's errors are RedisLockErrors.
 * Before d4beb2c this release hung forever; the raw error is newly reachable.
 */
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { createLockApp } from '../support/lock-app.js';

describe('app.close() while a release waits for a frozen Redis', () => {
  const own = useFrozenRedis();

  it('ends within shutdownTimeout and settles the pending release()', { timeout: 20_000 }, async () => {
    const app = own.opened(await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '1s' }));
    const lock = await app.locks.acquire('frozen:close');
    own.server().pause();
    const release: { settled?: string } = {};
    lock.release().then(
      () => (release.settled = 'resolved'),
      (error: Error) => (release.settled = `${error instanceof RedisLockError ? 'RedisLockError' : error.constructor.name}: ${error.message}`),
    );
    await closesWithin(app, 5_000);
    // Redis is still frozen: nothing but the engine itself can settle it.
    await expect.poll(() => release.settled, { timeout: 5_000 }).toBeDefined();
    // A release under way at shutdown is a normal end (HeldLock.shutdown): it resolves, or fails
    // with the library's error naming the lock, never with the Redis client's raw error.
    expect(release.settled).toMatch(/^(resolved|RedisLockError: .*"frozen:close")/);
  });
});
