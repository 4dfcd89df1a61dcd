import { describe, expect, it } from 'vitest';
import { RedisLockModule, type LockService } from '../../lib/index.js';
import { RedisLockMetricsModule } from '../../lib/otel/index.js';
import { appLoadingLazily, warningsOf } from '../support/lazily-loading-app.js';
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
  const locksInRoot = () => RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true });
  const report = async (locks: LockService) => {
    await (await locks.acquire('report:1', { name: 'report' })).release();
    return 'done';
  };

  it('is warned of when it is made: it records nothing from there', async () => {
    const { logs, url } = await appLoadingLazily([RedisLockMetricsModule.forRoot({ meterProvider: lockMetrics.provider })], [locksInRoot()], report);
    expect(await (await fetch(`${url}/lazy`)).text()).toBe('done');
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
    const { logs, url } = await appLoadingLazily([], [locksInRoot(), RedisLockMetricsModule.forRoot({ meterProvider: lockMetrics.provider })], report);
    expect(await (await fetch(`${url}/lazy`)).text()).toBe('done');
    expect((await lockMetrics.points('lock.hold.duration')).map((point) => point.attributes['lock.name'])).toEqual(['report']);
    expect(warningsOf(logs)).toEqual([]);
  });
});
