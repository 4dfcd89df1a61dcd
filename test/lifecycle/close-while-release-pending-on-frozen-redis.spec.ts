/**
 * Review of d4beb2c (bounded release): app.close() while a release is waiting for a frozen Redis
 * (SIGSTOP). The lease is long (30 s), so the release's own bound is far; close() must still end
 * within shutdownTimeout, and the release() its caller awaits must settle (close() stops the
 * deadline sweeper, which was the only bound on that wait). Both hold; but the release() then
 * rejects with ioredis' raw "Connection is closed." (an Error naming no lock), where a release
 * of a lock lost before close resolves (a52c85c) and the library's errors are RedisLockErrors.
 * Before d4beb2c this release hung forever; the raw error is newly reachable.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('app.close() while a release waits for a frozen Redis', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    own.server().resume();
    app = undefined;
  });

  it('ends within shutdownTimeout and settles the pending release()', { timeout: 20_000 }, async () => {
    app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '1s' });
    const lock = await app.locks.acquire('frozen:close');
    own.server().pause();
    const release: { settled?: string } = {};
    lock.release().then(
      () => (release.settled = 'resolved'),
      (error: Error) => (release.settled = `${error instanceof RedisLockError ? 'RedisLockError' : error.constructor.name}: ${error.message}`),
    );
    const closed: { done?: boolean } = {};
    app.close().then(() => (closed.done = true));
    await expect.poll(() => closed.done, { timeout: 5_000 }).toBe(true);
    // Redis is still frozen: nothing but the engine itself can settle it.
    await expect.poll(() => release.settled, { timeout: 5_000 }).toBeDefined();
    // A release under way at shutdown is a normal end (HeldLock.shutdown): it resolves, or fails
    // with the library's error naming the lock, never with the Redis client's raw error.
    expect(release.settled).toMatch(/^(resolved|RedisLockError: .*"frozen:close")/);
  });
});
