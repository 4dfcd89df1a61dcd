/**
 * Defect: with two Nest applications in one process (an HTTP app and a worker context, or two
 * testing modules), each importing `RedisLockMetricsModule.forRoot()`, every lock event of either
 * application is recorded twice: acquisitions, holds and losses are doubled, and the gauges move
 * by 2 per lock.
 *
 * Promise (docs/observability.md "Metrics"; lib/otel/redis-lock-metrics.module.ts TSDoc): the
 * module "Records OpenTelemetry metrics of every lock while the application runs";
 * `lock.acquire.duration` records one value per acquisition, `lock.active` counts the locks held.
 *
 * What happens: each module instance calls `enableLockMetrics()` (redis-lock-metrics.module.ts:30),
 * which subscribes its own `record` function to the process-wide `node:diagnostics_channel`
 * channels (lock-metrics.ts:107), where every LockService of the process publishes. Two module
 * instances, two subscribers, each recording every event of both applications into the same
 * instruments (same meter name on the same provider).
 */
import { Test, type TestingModule } from '@nestjs/testing';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockMetricsModule } from '../../lib/otel/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('RedisLockMetricsModule in two applications of one process', () => {
  useRedis();
  const lockMetrics = useLockMetrics();
  const modules: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(modules.splice(0).map((moduleRef) => moduleRef.close()));
  });

  it('records each acquisition once', async () => {
    const provider = lockMetrics.provider;
    for (let i = 0; i < 2; i++) {
      const moduleRef = await Test.createTestingModule({
        imports: [RedisLockModule.forRoot({ redis: redisUrl() }), RedisLockMetricsModule.forRoot({ meterProvider: provider })],
      })
        .setLogger(new CapturedLogs())
        .compile();
      await moduleRef.init();
      modules.push(moduleRef);
    }
    const locks = modules[0]!.get(LockService);
    const lock = await locks.acquire('report', { name: 'report' });

    expect((await lockMetrics.value<Histogram>('lock.acquire.duration', { 'lock.name': 'report' }))!.count).toBe(1);
    expect(await lockMetrics.value('lock.active', { 'lock.name': 'report' })).toBe(1);
    await lock.release();
  });
});
