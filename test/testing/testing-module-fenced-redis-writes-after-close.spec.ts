import { Test } from '@nestjs/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * docs/guarantees.md: "using the service after shutdown [...] fails with its error class and a
 * message naming what was wrong"; the FencedRedis that RedisLockModule provides refuses every
 * call once app.close() ran (`RedisLockError` naming the method and the shutdown). The one
 * RedisLockTestingModule provides wrote to the store's memory after close as before: a holder's
 * write in a `finally` that runs after shutdown, or a request served while the application
 * closes, passed in the app's tests and failed deployed. It now refuses as the Redis one does.
 * (A `new FencedRedis(locks)` of the user's own is the store's, no application's: it goes on.)
 */
describe.each(['redis', 'memory'] as const)("the module's FencedRedis after app.close() (%s)", (store) => {
  const redis = useRedis();
  const locks = new InMemoryLocks();
  afterAll(() => locks.clear());

  it('refuses writes and reads with a RedisLockError naming the method, and writes nothing', async () => {
    const module = store === 'redis' ? RedisLockModule.forRoot({ redis: redisUrl() }) : RedisLockTestingModule.forRoot({ locks });
    const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    const fenced = moduleRef.get(FencedRedis);
    const lock = await moduleRef.get(LockService).acquire('balance:{7}');
    await fenced.set('balance:{7}', '100', lock.fencingToken);
    await lock.release();
    await moduleRef.close();

    const calls = [
      () => fenced.set('balance:{7}', '110', lock.fencingToken + 1),
      () => fenced.hset('totals:{7}', 'sum', '1', lock.fencingToken + 1),
      () => fenced.get('balance:{7}'),
      () => fenced.get('balance:{7}', lock.fencingToken + 1),
      () => fenced.hget('totals:{7}', 'sum'),
      () => fenced.fence('balance:{7}'),
    ];
    const outcomes = await Promise.all(calls.map((call) => call().then(() => 'resolved', (error: unknown) => ({ isLockError: error instanceof RedisLockError, message: (error as Error).message }))));
    for (const outcome of outcomes) expect(outcome).toMatchObject({ isLockError: true, message: expect.stringMatching(/^FencedRedis\.(set|hset|get|hget|fence)\(\): the application has shut down/) });
    // Nothing was written after close.
    const after = store === 'redis' ? await redis.get('balance:{7}') : await new FencedRedis(locks).get('balance:{7}');
    expect(after).toBe('100');
  });
});
