import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (fencing): a plain read, `get(key)` or `hget(key, field)` without a fencing token, of a
 * key that is a lock's own Redis name under a running lock module's prefix (`lock:{account-7}`)
 * was sent as any read: on Redis it answered the holder's owner token (and the lock's fencing
 * counter for `lock:{account-7}:fence`), handed to a caller that may put it in a response or a log
 * (a route that reads data by a key from its request), while the in-memory FencedRedis answered
 * null, so a unit test saw nothing.
 *
 * Promise: docs/fencing.md lists "a key under a running lock module's prefix and a `{`" among the
 * keys refused with a TypeError naming the method, and says "`get()` and `hget()` reject with it
 * like the writes"; the house rule: never hand out an owner token.
 */
describe("a plain read of a lock's own key", () => {
  const redis = useRedis();

  it.each([
    ['Redis', () => RedisLockModule.forRoot({ redis: redisUrl() })],
    ['memory', () => RedisLockTestingModule.forRoot({})],
  ] as const)('is refused on %s with a TypeError naming the method, never answering the owner token', { timeout: 30_000 }, async (store, module) => {
    const moduleRef = await Test.createTestingModule({ imports: [module()] }).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    const fenced = moduleRef.get(FencedRedis);
    try {
      const lock = await locks.acquire('account-7');
      const ownerToken = store === 'Redis' ? await redis.get('lock:{account-7}') : undefined;
      if (store === 'Redis') expect(ownerToken).toEqual(expect.any(String));
      const readers: [string, string, (fenced: FencedRedis) => Promise<unknown>][] = [
        ['get', 'lock:{account-7}', (f) => f.get('lock:{account-7}')],
        ['get', 'lock:{account-7}:fence', (f) => f.get('lock:{account-7}:fence')],
        ['hget', 'lock:{account-7}', (f) => f.hget('lock:{account-7}', 'owner')],
      ];
      const clients = store === 'Redis' ? [fenced, new FencedRedis(redis)] : [fenced];
      for (const client of clients) {
        for (const [method, key, read] of readers) {
          const outcome = await read(client).then(
            (value) => ({ answered: value }),
            (error: unknown) => ({ name: (error as Error).name, message: (error as Error).message }),
          );
          expect(JSON.stringify(outcome)).not.toContain(ownerToken ?? '\u0000');
          expect(outcome, `${method}(${key})`).toEqual({ name: 'TypeError', message: expect.stringMatching(new RegExp(`^FencedRedis\\.${method}\\(\\): Argument "key" "${key.replace(/[{}]/g, '\\$&')}" is under "lock:\\{"`)) });
        }
      }
      await lock.release();
    } finally {
      await moduleRef.close();
    }
  });
});
