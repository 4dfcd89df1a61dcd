import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review. configuration.md: "After `app.close()` resolves no lock this process took is
 * left in Redis (unless Redis did not answer within `shutdownTimeout`)". A `release()` that
 * failed without reaching Redis (the client could not send it: a connection down, ioredis'
 * `enableOfflineQueue: false` or `maxRetriesPerRequest` spent during an outage) marks the lock
 * released and forgets it (HeldLock `unconfirmed`: "Let a later release() try again"), so
 * shutdown never gives it back: with Redis healthy again and answering at once, app.close()
 * leaves the lock held in Redis for the rest of its ttl, and every other process waits that long.
 */
describe('a release that failed before reaching Redis, then app.close() with Redis healthy', () => {
  const own = useOwnRedis();

  it('app.close() gives the lock back', { timeout: 30_000 }, async () => {
    const client = new Redis(own.url());
    client.on('error', () => undefined);
    const app = await createLockApp({ redis: client, ttl: 60_000 });
    try {
      const lock = await app.locks.acquire('k');
      expect(await own.redis().exists('lock:{k}')).toBe(1);
      // The connection is down when the holder releases: the release cannot be sent.
      client.disconnect();
      const failed = await lock.release().then(
        () => 'released',
        (error: unknown) => (error as Error).message,
      );
      expect(failed).toBe('The release of lock "k" was not answered (Connection is closed.); its lease ends on its own in Redis.');
      expect(lock.held).toBe(false);
      // The connection is back, Redis answers: the application shuts down.
      await client.connect();
      await client.ping();
      await app.close();
      // Before: 1 — the lock stays in Redis (PTTL ~60 s) though Redis answered everything at shutdown.
      expect(await own.redis().exists('lock:{k}')).toBe(0);
    } finally {
      await app.close();
      client.disconnect();
    }
  });
});
