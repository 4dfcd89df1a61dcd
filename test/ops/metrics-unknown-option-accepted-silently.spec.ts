/**
 * Defect: `enableLockMetrics()` and `RedisLockMetricsModule.forRoot()` take an option name they
 * do not know without a word. A typo (`meterprovider`, `provider`, `meter`) is dropped, the
 * recorder falls back to the API's global meter provider, which is the no-op one when the
 * application meant to pass its own: nothing is subscribed and no lock metric is ever recorded,
 * with no error and no warning. Every other options object of the library refuses such a name
 * at startup with an `InvalidLockOptionsError` naming it ("left out: it is no option of ...":
 * `RedisLockModule.forRoot()`, `RedisLockBoardModule`, `RedisLockTestingModule`, `InMemoryLocks`).
 *
 * Promise: docs/configuration.md "Every option is validated when the application starts ... A
 * name that is no option (`prefix` for `keyPrefix`) is refused too"; the brief's bar: bad
 * options get a clear error naming the option.
 *
 * Code at fault: lib/otel/lock-metrics.ts `checkMetricsOptions` checks `meterProvider` only.
 */
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { enableLockMetrics, RedisLockMetricsModule, type LockMetricsHandle } from '../../lib/otel/index.js';

describe('nestjs-redis-lock/otel given an option name it does not know', () => {
  let handle: LockMetricsHandle | undefined;
  afterEach(() => {
    handle?.disable();
    handle = undefined;
  });

  const thrown = (call: () => unknown): unknown => {
    try {
      const result = call();
      if (result !== null && typeof result === 'object' && 'disable' in result) handle = result as LockMetricsHandle;
      return undefined;
    } catch (error) {
      return error;
    }
  };

  it('enableLockMetrics({ meterprovider }) is refused naming the option, not run on the no-op global provider', () => {
    const error = thrown(() => enableLockMetrics({ meterprovider: new MeterProvider() } as never));
    // Fails: undefined (a handle came back; nothing is recorded anywhere).
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('meterprovider');
    expect((error as Error).message).toContain('enableLockMetrics');
  });

  it('RedisLockMetricsModule.forRoot({ provider }) is refused naming the option and the method', () => {
    const error = thrown(() => RedisLockMetricsModule.forRoot({ provider: new MeterProvider() } as never));
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('provider');
    expect((error as Error).message).toContain('RedisLockMetricsModule.forRoot');
  });
});
