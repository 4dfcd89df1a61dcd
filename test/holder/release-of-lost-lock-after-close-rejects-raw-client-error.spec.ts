import { describe, expect, it } from 'vitest';
import { LockLostError, RedisLockError } from '../../lib/index.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review. A holder's `finally { await lock.release() }` commonly runs after the
 * application began closing. For a lock still held at shutdown that release() resolves (shutdown
 * gave it back and shares that release). For a lock already lost (its renewal refused, or its
 * lease expired) release() sends another owner-checked release on the connection app.close()
 * closed, and rejects with the client's raw "Connection is closed." (an `Error`, not a
 * `RedisLockError`, naming neither the method nor the lock), although there is nothing to give
 * back: Lock.release() is documented as idempotent, and using the service after shutdown as
 * failing with the library's error class.
 */
describe('release() of a lost lock after app.close()', () => {
  const own = useOwnRedis();

  it('does not reject with the Redis client\'s raw error', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: own.url(), ttl: 1_500 });
    const lock = await app.locks.acquire('k');
    // Someone deletes the key (an operator, eviction): the next renewal is refused.
    await own.redis().del('lock:{k}');
    for (let i = 0; i < 400 && !lock.signal.aborted; i++) await sleep(25);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect((lock.signal.reason as LockLostError).reason).toBe('refused');
    await app.close();
    const outcome = await lock.release().then(
      () => 'resolved',
      (error: unknown) => ({ class: (error as Error).constructor.name, message: (error as Error).message, isLockError: error instanceof RedisLockError }),
    );
    // Before: { class: 'Error', message: 'Connection is closed.', isLockError: false }
    expect(typeof outcome === 'string' ? outcome : outcome.isLockError ? 'RedisLockError' : `${outcome.class}: ${outcome.message}`).toMatch(/^(resolved|RedisLockError)$/);
  });
});
