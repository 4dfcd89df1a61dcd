import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review of what a newcomer meets first. docs/locks.md: the library's errors "all extend
 * `RedisLockError`, so one `instanceof` tells lock trouble from your own errors". `isLocked()`,
 * `inspect()`, `tryAcquire()` and `extend()` rejected with the Redis client's own error when Redis could not be
 * asked (here the application's client closed; the same for a server refusing the command), so a
 * caller that sorted errors by `instanceof RedisLockError` took lock trouble for its own. They now
 * reject with a `RedisLockError` that names the call and keeps the client's error as its `cause`.
 */
describe("a lock read or extension Redis cannot be asked", () => {
  const redis = useRedis();
  let client: Redis;
  let app: LockApp;
  afterEach(async () => {
    await app.close();
    client.disconnect();
    // The extended lock stays in Redis for its 30 s lease, its client gone: the next file this
    // worker runs shares the database, and one that locks "k" would wait for it.
    await redis.flushdb();
  });

  const start = async (): Promise<void> => {
    client = new Redis(redisUrl());
    app = await createLockApp({ redis: client, shutdownTimeout: '100ms' });
  };
  /** The call's rejection: a RedisLockError whose message names `named`, the client's error its cause. */
  const expectRefused = async (call: Promise<unknown>, named: string): Promise<void> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect({ isLockError: error instanceof RedisLockError, message: error?.message, cause: (error?.cause as Error | undefined)?.message }).toEqual({
      isLockError: true,
      message: expect.stringContaining(named),
      cause: 'Connection is closed.',
    });
  };

  it('isLocked() and inspect() reject with a RedisLockError naming the call, the client\'s error as its cause', async () => {
    await start();
    client.disconnect();
    await expectRefused(app.locks.isLocked('k'), 'isLocked("k")');
    await expectRefused(app.locks.inspect('k'), 'inspect("k")');
  });

  it('tryAcquire() rejects with a RedisLockError naming the call, and an abort reason of the caller\'s stays its own', async () => {
    await start();
    client.disconnect();
    await expectRefused(app.locks.tryAcquire('k'), 'tryAcquire("k")');
    const mine = new Error('mine');
    expect(await app.locks.tryAcquire('k', { signal: AbortSignal.abort(mine) }).catch((e: unknown) => e)).toBe(mine);
  });

  it('extend() rejects with a RedisLockError naming the lock, which is still held until its lease deadline', async () => {
    await start();
    const lock = await app.locks.acquire('k', { ttl: '30s' });
    client.disconnect();
    await expectRefused(lock.extend(), 'Lock "k" could not be extended');
    expect(lock.held).toBe(true);
  });
});
