/**
 * Found by review (thirty-eighth session, fixed in the thirty-ninth). A multi-key `acquire()`
 * holds its first keys while it waits for a later one. When one of those is lost meanwhile (its
 * renewal refused: deleted, evicted, released by force), the call gives every key back and takes
 * them again, within its wait: the caller never had that key, and no code ran under it. Yet the
 * part reported its loss as a held lock's: `lock lost during renewal: "..."` logged as an error,
 * which an operator's alerting reads as code running unprotected. It is now a warning that says
 * what the call does about it (the `lost` event of the part, with `keys`, still balances its
 * `acquired` one).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

describe('a multi-key acquire() whose first key is lost while it waits for a later one', () => {
  it('logs no lock loss as an error, warns that it takes every key again, and gets the lock', { timeout: 30_000 }, async () => {
    const holderApp = await createLockApp();
    const app = await createLockApp({ ttl: 2_000, renewInterval: 100 });
    const redis = new Redis(redisUrl());
    try {
      const holder = await holderApp.locks.acquire('mk-part-lost-b');
      const call = app.locks.acquire(['mk-part-lost-a', 'mk-part-lost-b'], { waitTimeout: 20_000 });
      await expect.poll(() => redis.exists('lock:{mk-part-lost-a}')).toBe(1);
      await redis.del('lock:{mk-part-lost-a}');
      // Its next renewal is refused: the part is lost, and says so.
      await expect.poll(() => app.logs.lines.some((line) => line.message.includes('mk-part-lost-a'))).toBe(true);
      await holder.release();
      const lock = await call;
      expect(lock.held).toBe(true);
      expect(app.logs.lines.filter((line) => line.level === 'error')).toEqual([]);
      expect(app.logs.has('warn', '"mk-part-lost-a"')).toBe(true);
      expect(app.logs.has('warn', 'takes them again')).toBe(true);
      await lock.release();
    } finally {
      redis.disconnect();
      await app.close();
      await holderApp.close();
    }
  });
});
