import { Controller, Get, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockMetricsModule } from '../../lib/otel/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review. `RedisLockMetricsModule` starts recording in `onModuleInit`. Imported by a
 * module that a route loads with `LazyModuleLoader` (an observability module loaded on first use,
 * say), it never did: Nest runs no lifecycle hook of a lazily loaded module, so the lock metrics
 * of the whole process were never recorded, without a word (a `RedisLockModule` loaded so is
 * warned of since the forty-fourth session). The module cannot record from there (nothing would
 * stop it at `app.close()`); it says so when it is made after the HTTP server started listening,
 * naming the remedy: import it in the root module.
 */
describe('RedisLockMetricsModule.forRoot() imported by a module a route loads lazily', () => {
  useRedis();
  const lockMetrics = useLockMetrics();

  @Injectable()
  class Reports {
    constructor(readonly locks: LockService) {}
  }

  /** A listening HTTP application importing `rootImports`, whose `GET /report` loads a module importing `lazyImports` and takes a lock. */
  async function appLoadingLazily(lazyImports: DynamicModule[], rootImports: DynamicModule[]) {
    @Module({ imports: lazyImports, providers: [Reports], exports: [Reports] })
    class LazyReports {}
    @Controller()
    class ReportsController {
      constructor(private readonly loader: LazyModuleLoader) {}
      @Get('report')
      async report(): Promise<string> {
        const lazy = await this.loader.load(() => LazyReports);
        await (await lazy.get(Reports).locks.acquire('report:1', { name: 'report' })).release();
        return 'done';
      }
    }
    const logs = new CapturedLogs();
    const app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), ...rootImports], controllers: [ReportsController] }, { logs, logger: logs });
    onTestFinished(() => app.close());
    return { logs, url: await listenOnLoopback(app) };
  }

  const warningsOf = (logs: CapturedLogs) => logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);

  it('is warned of when it is made: it records nothing from there', async () => {
    const { logs, url } = await appLoadingLazily([RedisLockMetricsModule.forRoot({ meterProvider: lockMetrics.provider })], []);
    expect(await (await fetch(`${url}/report`)).text()).toBe('done');
    // Nest ran none of its hooks: nothing recorded.
    expect(await lockMetrics.metrics()).toEqual([]);
    // Before the fix: nothing logged either.
    const warnings = warningsOf(logs);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('RedisLockMetricsModule');
    expect(warnings[0]).toContain('LazyModuleLoader');
    expect(warnings[0]).toContain('lock metrics are not recorded');
    expect(warnings[0]).toContain('root module');
  });

  it('is not warned of in the root module, where it records', async () => {
    const { logs, url } = await appLoadingLazily([], [RedisLockMetricsModule.forRoot({ meterProvider: lockMetrics.provider })]);
    expect(await (await fetch(`${url}/report`)).text()).toBe('done');
    expect((await lockMetrics.points('lock.hold.duration')).map((point) => point.attributes['lock.name'])).toEqual(['report']);
    expect(warningsOf(logs)).toEqual([]);
  });
});
