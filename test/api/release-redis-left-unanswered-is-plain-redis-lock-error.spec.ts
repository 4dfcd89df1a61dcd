import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisLockError, RedisUnansweredError, type Lock } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useFrozenRedis } from '../support/frozen-redis.js';
import { settledRecord } from '../support/mechanism.js';

// A release Redis never answers (frozen by SIGSTOP: a network cut that resets nothing looks the
// same) rejects by the end of its lease, or when the application's shutdown ends. Redis did not
// answer it, as it did not answer an `isLocked()` or a `tryAcquire()` that reject with a
// `RedisUnansweredError`: a user's filter or retry that tells an unanswered Redis apart by class
// must find this one too, not a plain `RedisLockError` it can tell only by its message.
describe('release() that Redis leaves unanswered', () => {
  const frozen = useFrozenRedis();

  const kinds: [string, (app: LockApp) => Promise<Lock>][] = [
    ['a lock', (app) => app.locks.acquire('unanswered:<mutex>')],
    ['semaphore permits', (app) => app.locks.acquire('unanswered:sem', { limit: 3 })],
    ['a read lock', (app) => app.locks.acquire('unanswered:read', { mode: 'read' })],
    ['a multi-key lock', (app) => app.locks.acquire(['unanswered:a', 'unanswered:b'])],
  ];

  it.each(kinds)('%s: rejects by the end of its lease with a RedisUnansweredError', async (_name, take) => {
    const app = frozen.opened(await createLockApp({ redis: frozen.url(), ttl: 600 }));
    const lock = await take(app);
    frozen.server().pause();
    const release = settledRecord(lock.release());
    await expect.poll(() => release.settled, { timeout: 5_000 }).toBeDefined();
    const error = release.settled!.error;
    expect(error).toBeInstanceOf(RedisUnansweredError);
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).name).toBe('RedisUnansweredError');
    expect((error as Error).message).toMatch(/did not answer the release of lock/);
  });

  it('rejects when the shutdown ends with a RedisUnansweredError (a client handed in)', async () => {
    const client = new Redis(frozen.url());
    client.on('error', () => undefined);
    try {
      const app = frozen.opened(await createLockApp({ redis: client, ttl: '30s', shutdownTimeout: '300ms' }));
      const lock = await app.locks.acquire('unanswered:closing');
      frozen.server().pause();
      const release = settledRecord(lock.release());
      await app.close();
      await expect.poll(() => release.settled, { timeout: 5_000 }).toBeDefined();
      const error = release.settled!.error;
      expect(error).toBeInstanceOf(RedisUnansweredError);
      expect((error as Error).message).toMatch(/before the application's shutdown ended/);
    } finally {
      frozen.server().resume();
      client.disconnect();
    }
  });
});
