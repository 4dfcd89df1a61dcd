/**
 * Found by review (an older session's suspicion, settled here). A meter whose `createHistogram()`,
 * `createCounter()` or `createUpDownCounter()` throws when the instrument is made (a bug in an
 * SDK, a wrapper that refuses an instrument name, a View that fails) failed the application's
 * startup: `RedisLockMetricsModule.onModuleInit()` calls `enableLockMetrics()`, whose
 * `startRecorder` made the six instruments outside any try/catch, so `app.init()` rejected with the
 * meter's error, and the locks, which do not need metrics, never started.
 *
 * Promise: docs/observability.md "A meter that throws ... costs that metric, never the lock or
 * the application". Expected: the application starts, the instruments that could be made record,
 * those that could not are skipped, and one warning names them and says why (the error's text
 * cut short: a meter's error is not ours to print whole).
 *
 * Code at fault: lib/otel/lock-metrics.ts `startRecorder` (the instruments made unguarded).
 */
import { Test, type TestingModule } from '@nestjs/testing';
import type { Meter, MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockMetricsModule } from '../../lib/otel/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { redisUrl, useRedis } from '../support/redis.js';

/** The real SDK's provider, except that the `methods` of its meters throw `error` for the instruments `names` (all by default). */
function throwingAt(sdk: ApiMeterProvider, methods: readonly (keyof Meter)[], error: Error, names?: readonly string[]): ApiMeterProvider {
  return {
    getMeter: (...args: Parameters<ApiMeterProvider['getMeter']>): Meter =>
      new Proxy(sdk.getMeter(...args), {
        get: (target, property, receiver) => {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (!methods.includes(property as keyof Meter) || typeof value !== 'function') return value;
          return (name: string, ...rest: unknown[]) => {
            if (names === undefined || names.includes(name)) throw error;
            return (value as (...a: unknown[]) => unknown).call(target, name, ...rest);
          };
        },
      }),
  };
}

describe('lock metrics on a meter that throws when an instrument is made', () => {
  useRedis();
  const lockMetrics = useLockMetrics();

  async function start(meterProvider: ApiMeterProvider): Promise<{ locks: LockService; warnings: string[] }> {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    onTestFinished(() => void process.off('warning', onWarning));
    const moduleRef: TestingModule = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl() }), RedisLockMetricsModule.forRoot({ meterProvider })],
    })
      .setLogger(new CapturedLogs())
      .compile();
    onTestFinished(() => moduleRef.close());
    // Before the fix this rejects with the meter's error: the application does not start.
    await moduleRef.init();
    return { locks: moduleRef.get(LockService), warnings };
  }

  it('starts the application, records with the instruments it could make, and warns once naming the others', async () => {
    // A long text: a meter's error is printed cut short, whatever it holds.
    const error = new Error(`histograms are refused by this meter ${'x'.repeat(2_000)}`);
    const { locks, warnings } = await start(throwingAt(lockMetrics.provider, ['createHistogram'], error));

    const lock = await locks.acquire('order:1', { name: 'order' });
    expect(lock.held).toBe(true);
    // The counters were made and record; the histograms were skipped.
    expect(await lockMetrics.value('lock.active', { 'lock.name': 'order' })).toBe(1);
    await lock.release();
    expect(await lockMetrics.value('lock.active', { 'lock.name': 'order' })).toBe(0);
    expect(await lockMetrics.points('lock.acquire.duration')).toEqual([]);

    await expect.poll(() => warnings.filter((message) => message.includes('nestjs-redis-lock')).length).toBe(1);
    const [warning] = warnings.filter((message) => message.includes('nestjs-redis-lock'));
    expect(warning).toContain('lock.acquire.duration');
    expect(warning).toContain('lock.hold.duration');
    expect(warning).toContain('histograms are refused by this meter');
    expect(warning).not.toContain('lock.active');
    expect(warning!.length).toBeLessThan(1_000);
    // Locks taken later record nothing new in the warnings: the skipped instruments are skipped, not retried.
    await (await locks.acquire('order:2', { name: 'order' })).release();
    expect(warnings.filter((message) => message.includes('nestjs-redis-lock'))).toHaveLength(1);
  });

  it('starts the application when one counter cannot be made, and records the other instruments', async () => {
    const { locks, warnings } = await start(throwingAt(lockMetrics.provider, ['createUpDownCounter'], new Error('no up-down counters here'), ['lock.waiting']));

    await (await locks.acquire('order:1', { name: 'order' })).release();
    expect((await lockMetrics.value<Histogram>('lock.acquire.duration', { 'lock.name': 'order', 'lock.result': 'acquired' }))?.count).toBe(1);
    expect(await lockMetrics.value('lock.active', { 'lock.name': 'order' })).toBe(0);
    await expect.poll(() => warnings.find((message) => message.includes('nestjs-redis-lock'))).toMatch(/no up-down counters here.*lock\.waiting is not recorded/s);
  });

  it('starts the application when no instrument can be made', async () => {
    const { locks, warnings } = await start(
      throwingAt(lockMetrics.provider, ['createHistogram', 'createCounter', 'createUpDownCounter'], new Error('this meter makes no instruments')),
    );

    await (await locks.acquire('order:1', { name: 'order' })).release();
    expect(await lockMetrics.metrics()).toEqual([]);
    await expect.poll(() => warnings.find((message) => message.includes('nestjs-redis-lock'))).toMatch(/this meter makes no instruments.*no lock metric is recorded/s);
  });
});
