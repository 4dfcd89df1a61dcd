import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedRedis, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Review (fencing): `FencedRedis.get()` and `hget()` throw synchronously instead of returning a
 * rejected promise, unlike `set()`, `hset()` and `fence()` of the same class.
 *
 * Promise: `get(key): Promise<string | null>` and `hget(key, field): Promise<string | null>`
 * (lib/fencing/fenced-redis.ts, TSDoc: "a plain read"); the class' other methods answer bad
 * input with a rejected promise (they are `async`), and the module elsewhere takes care to settle
 * errors "in a later microtask, as acquire() would" (lib/core/engine/lock-manager.ts).
 *
 * What happens: `get` and `hget` are not `async` (lib/fencing/fenced-redis.ts:105-108 and
 * 118-122): `fenceHashOf`'s TypeError, the "field must be a string" TypeError, and, for the
 * FencedRedis that `RedisLockModule` injects in quorum mode, the provider's RedisLockError
 * (lib/fencing/fenced-redis.provider.ts:25-29, raised from `store()`), are thrown at the call.
 * Code written against the promise (`fenced.get(key).catch(...)`, `Promise.allSettled([...])`,
 * a `.then(ok, fail)` chain) never sees them: the exception escapes past its handler.
 */
const settlesAsRejection = async (call: () => Promise<unknown>, error: RegExp | (new (...args: never[]) => Error)) => {
  let promise: Promise<unknown> | undefined;
  expect(() => {
    promise = call();
  }).not.toThrow();
  await expect(promise).rejects.toThrow(error as never);
};

describe('FencedRedis reads settle bad calls as rejections, as its writes do', () => {
  it('get() and hget() of a bad key or field return a rejected promise (like set(), hset() and fence())', async () => {
    const fenced = new FencedRedis(new InMemoryLocks());
    // The writes and fence() already do:
    await settlesAsRejection(() => fenced.set('', 'v', 1), TypeError);
    await settlesAsRejection(() => fenced.fence('a}b'), TypeError);
    // The reads throw at the call:
    await settlesAsRejection(() => fenced.get(''), TypeError);
    await settlesAsRejection(() => fenced.hget('a}b', 'f'), TypeError);
    await settlesAsRejection(() => fenced.hget('account:{7}', 5 as never), TypeError);
  });

  describe('in quorum mode, the injected FencedRedis', () => {
    const servers: RedisServer[] = [];
    beforeAll(async () => {
      for (let i = 0; i < 3; i++) servers.push(await startRedisServer());
    });
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
    });

    it('answers get() and hget() with a rejected promise naming the problem, as it answers set()', async () => {
      const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: servers.map((server) => server.url) })] }).compile();
      await moduleRef.init();
      try {
        const fenced = moduleRef.get(FencedRedis);
        await settlesAsRejection(() => fenced.set('q', 'v', 1), RedisLockError);
        await settlesAsRejection(() => fenced.get('q'), RedisLockError);
        await settlesAsRejection(() => fenced.hget('q', 'f'), RedisLockError);
      } finally {
        await moduleRef.close();
      }
    });
  });
});
