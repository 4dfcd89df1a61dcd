import { describe, expect, it } from 'vitest';
import { SemaphoreLimitError } from '../lib/index.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/**
 * Found by review. docs/locks.md, Errors: "`SemaphoreLimitError`: a semaphore is in use with another
 * `limit` than the call gave (`limitInUse`, `requestedLimit`)", and its JSDoc example
 * (`acquire('export', { limit: 3 })` then `acquire('export', { limit: 5 })`). From another chain
 * (or process) that is what the call gets; from inside the chain that holds the semaphore,
 * `LockManager.reenter` (lib/core/engine/lock-manager.ts, "cannot share the outer permits")
 * throws a plain `RedisLockError` instead, without `limitInUse`/`requestedLimit`, so code that
 * handles `SemaphoreLimitError` as documented misses it. The multi-key form goes the same way.
 */
describe('a nested acquisition of a held semaphore with another limit', () => {
  useRedis();
  const app = useLockApps();

  it('fails with SemaphoreLimitError, as the same call from another chain does', async () => {
    const { locks } = await app({ waitTimeout: 300 });
    await locks.using(
      'export',
      async () => {
        const nested = await locks.acquire('export', { limit: 5 }).catch((e: unknown) => e);
        // Current code: RedisLockError "... it cannot share the outer permits ...".
        expect(nested).toBeInstanceOf(SemaphoreLimitError);
        expect(nested).toMatchObject({ limitInUse: 3, requestedLimit: 5 });
      },
      { limit: 3 },
    );
  });

  it('fails a nested multi-key acquisition with SemaphoreLimitError too', async () => {
    const { locks } = await app({ waitTimeout: 300 });
    await locks.using(
      ['export:a', 'export:b'],
      async () => {
        const nested = await locks.acquire(['export:b', 'export:a'], { limit: 5 }).catch((e: unknown) => e);
        expect(nested).toBeInstanceOf(SemaphoreLimitError);
      },
      { limit: 3 },
    );
  });

});
