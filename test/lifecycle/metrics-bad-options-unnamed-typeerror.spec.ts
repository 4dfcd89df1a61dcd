import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { enableLockMetrics, RedisLockMetricsModule } from '../../lib/otel/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review. The library's rule (docs/configuration.md: "Every option is validated when
 * the application starts ... and a bad one fails with an `InvalidLockOptionsError` naming the
 * option and the value"; the board and the health indicator follow it) does not reach
 * `nestjs-redis-lock/otel`: `enableLockMetrics()` and `RedisLockMetricsModule.forRoot()`
 * (lib/otel/lock-metrics.ts, lib/otel/redis-lock-metrics.module.ts) take their options unchecked,
 * so a `meterProvider` that is not one (a config value, an SDK `MeterProvider` class instead of an
 * instance) fails at module init with a bare `TypeError: provider.getMeter is not a function`,
 * naming neither the option nor the method, and `forRoot(null)` with "Cannot read properties of null".
 */
describe('nestjs-redis-lock/otel with bad options', () => {
  it('enableLockMetrics() refuses a meterProvider that is not one with an InvalidLockOptionsError naming it', () => {
    const error = ((): unknown => {
      try {
        enableLockMetrics({ meterProvider: 'otel' as never });
        return undefined;
      } catch (thrown) {
        return thrown;
      }
    })();
    // Before the fix: TypeError "provider.getMeter is not a function".
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('meterProvider');
    expect((error as Error).message).toContain('enableLockMetrics');
  });

  it('RedisLockMetricsModule.forRoot() refuses null and a bad meterProvider, naming the method and the option', async () => {
    const startup = async (options: unknown): Promise<unknown> => {
      try {
        const moduleRef = await Test.createTestingModule({
          imports: [RedisLockModule.forRoot({ redis: redisUrl() }), RedisLockMetricsModule.forRoot(options as never)],
        })
          .setLogger(new CapturedLogs())
          .compile();
        await moduleRef.init().finally(() => moduleRef.close());
        return undefined;
      } catch (error) {
        return error;
      }
    };
    const refusals = [await startup(null), await startup({ meterProvider: 42 })].map((error) => ({
      class: (error as Error)?.constructor?.name,
      namesMethod: String((error as Error)?.message).includes('RedisLockMetricsModule.forRoot()'),
    }));
    // Before the fix: [{ class: 'TypeError', namesMethod: false }, { class: 'TypeError', namesMethod: false }].
    expect(refusals).toEqual([
      { class: 'InvalidLockOptionsError', namesMethod: true },
      { class: 'InvalidLockOptionsError', namesMethod: true },
    ]);
  });
});
