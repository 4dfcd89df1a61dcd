import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { FencedRedis, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review of a52c85c ("release() of a lock lost before close [...] rejected with the
 * client's raw `Connection is closed.`"). docs/guarantees.md: "using the service after shutdown
 * [...] fails with its error class and a message naming what was wrong". The FencedRedis that
 * RedisLockModule provides writes on the module's own connection, which app.close() closes:
 * a fenced write or read made after it (a holder's last write in a `finally`, a request still
 * being served while the application closes) rejects with ioredis' raw `Error: Connection is
 * closed.`, not a RedisLockError, naming neither FencedRedis, the method nor the shutdown,
 * which LockService's own methods say ("LockService is shut down ...").
 */
describe('the module\'s FencedRedis after app.close()', () => {
  const own = useOwnRedis();

  it('rejects with the library\'s error class naming the method, not the client\'s raw error', { timeout: 30_000 }, async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: own.url() })] }).compile();
    await moduleRef.init();
    const fenced = moduleRef.get(FencedRedis);
    await fenced.set('balance:{7}', '100', 1);
    await moduleRef.close();
    const outcomes = await Promise.all(
      [() => fenced.set('balance:{7}', '110', 2), () => fenced.get('balance:{7}')].map((call) =>
        call().then(
          () => 'resolved',
          (error: unknown) => ({ isLockError: error instanceof RedisLockError, message: (error as Error).message }),
        ),
      ),
    );
    // Before: [{ isLockError: false, message: 'Connection is closed.' }, { isLockError: false, message: 'Connection is closed.' }]
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ isLockError: true, message: expect.stringMatching(/FencedRedis\.(set|get)\(\)/) });
    }
    // And nothing was written after close.
    expect(await own.redis().get('balance:{7}')).toBe('100');
  });
});
