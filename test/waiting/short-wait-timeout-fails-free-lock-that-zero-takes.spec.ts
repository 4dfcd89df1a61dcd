import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../../lib/index.js';
import { blockRedis } from '../support/block-redis.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review (rev-a): docs/configuration.md says `waitTimeout` is how long acquire() waits
 * for a BUSY lock, and `0` tries once, waiting at most 1 s for Redis to answer (the grace a
 * healthy Redis answering a little late deserves, `LAST_ATTEMPT_GRACE_MS`). A small positive
 * waitTimeout gets less: its first attempt is bounded by `min(waitTimeout, 1 s)`
 * (acquisition.ts, `send()`), so a FREE lock on a Redis that answers a little late (a 300 ms
 * stall, a far-away server) is refused with "Redis did not answer" by `waitTimeout: 50`, while
 * `waitTimeout: 0` takes it. Waiting longer makes the call fail where a try succeeds.
 */
describe('a free lock behind a Redis that answers 300 ms late', () => {
  const own = useOwnRedis();

  it('is taken by waitTimeout 0 and by waitTimeout 50 alike', async () => {
    const app = await createLockApp({ redis: own.url(), ttl: 30_000 });
    try {
      // Warm up: scripts loaded, connection ready.
      await (await app.locks.acquire('warm')).release();

      const outcome = async (waitTimeout: number): Promise<string> => {
        const { ended } = await blockRedis(own.url(), 300);
        const result = await app.locks.acquire(`free-${waitTimeout}`, { waitTimeout }).then(
          async (lock) => {
            await lock.release();
            return 'acquired';
          },
          (error: unknown) => (error instanceof LockNotAcquiredError ? `LockNotAcquiredError: ${(error.cause as Error | undefined)?.message ?? 'busy'}` : String(error)),
        );
        await ended;
        return result;
      };

      const tried = await outcome(0);
      const waited = await outcome(50);
      expect({ tried, waited }).toEqual({ tried: 'acquired', waited: 'acquired' });
    } finally {
      await app.close();
    }
  }, 30_000);
});
