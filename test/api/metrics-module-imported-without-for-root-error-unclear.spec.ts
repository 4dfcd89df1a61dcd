import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockMetricsModule } from '../../lib/otel/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review: `imports: [RedisLockMetricsModule]` (the class, as one imports `TerminusModule`,
 * rather than `RedisLockMetricsModule.forRoot()`) failed with "Nest can't resolve dependencies of
 * the RedisLockMetricsModule (?). Please make sure that the argument
 * Symbol(nestjs-redis-lock:metrics-options) at index [0] is available", naming an internal token,
 * not the remedy. As for `RedisLockModule` (test/api/module-imported-without-for-root-error-unclear.spec.ts),
 * the error stays Nest's, and the token it names says what to do.
 */
describe('RedisLockMetricsModule imported as a class, without forRoot()', () => {
  it('fails the startup with an error that says to import forRoot()', async () => {
    const error = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() }), RedisLockMetricsModule] })
      .setLogger(new CapturedLogs())
      .compile()
      .then(
        (moduleRef) => moduleRef.close().then(() => 'started'),
        (e: unknown) => e,
      );
    expect(String((error as Error)?.message ?? error)).toContain('import RedisLockMetricsModule.forRoot(), not the class RedisLockMetricsModule alone');
  });
});
