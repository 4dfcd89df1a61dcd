import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review (fortieth session, beside RedisLockMetricsModule's unclear error):
 * `imports: [RedisLockBoardModule]` (the class, as one imports `TerminusModule`, rather than
 * `RedisLockBoardModule.register({ guards })`) started without a word and served no board: the
 * class alone has no routes, so the admin found a 404 where the board should be, and nothing said
 * why. The startup now fails, saying to call register() or registerAsync().
 */
describe('RedisLockBoardModule imported as a class, without register()', () => {
  it('fails the startup with an error that says to call register()', async () => {
    const error = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule] })
      .setLogger(new CapturedLogs())
      .compile()
      .then(
        (moduleRef) => moduleRef.close().then(() => 'started, serving no board'),
        (e: unknown) => e,
      );
    expect(String((error as Error)?.message ?? error)).toContain('RedisLockBoardModule.register(');
  });
});
