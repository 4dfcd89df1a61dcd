import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type DataPoint, type MetricData } from '@opentelemetry/sdk-metrics';
import { afterEach } from 'vitest';
import { enableLockMetrics, type LockMetricsHandle, type LockMetricsOptions } from '../../lib/otel/index.js';

export interface LockMetrics {
  /**
   * The test's OpenTelemetry SDK meter provider, made on first use: one reader that exports
   * cumulative values to memory when a read below flushes it (its one-minute interval never
   * comes within a test). Shut down after the test.
   */
  readonly provider: MeterProvider;
  /**
   * `enableLockMetrics(options)`, on the test's `provider` by default (`enable({})`: on the API's
   * global provider, as `enableLockMetrics()`); disabled after the test.
   */
  enable(options?: LockMetricsOptions): LockMetricsHandle;
  /** Every metric the provider holds now (flushed: the last export, cumulative). */
  metrics(): Promise<MetricData[]>;
  /** The data points of the instrument `name` now: [] while it has recorded nothing. */
  points<T = number>(name: string): Promise<DataPoint<T>[]>;
  /** The value of the point of `name` whose attributes include all of `attributes`, if any. */
  value<T = number>(name: string, attributes: Record<string, string>): Promise<T | undefined>;
}

/**
 * Lock metrics recorded by the real OpenTelemetry SDK, for the tests of a file, read back from
 * memory: the lock metrics a test enables are disabled, and its provider shut down, after each
 * test.
 *
 * @example
 * const lockMetrics = useLockMetrics();
 * it('counts the lock held', async () => {
 *   lockMetrics.enable();
 *   const lock = await locks.acquire('order:1', { name: 'order' });
 *   expect(await lockMetrics.value('lock.active', { 'lock.name': 'order' })).toBe(1);
 * });
 */
export function useLockMetrics(): LockMetrics {
  let sdk: { provider: MeterProvider; exporter: InMemoryMetricExporter } | undefined;
  const handles: LockMetricsHandle[] = [];
  afterEach(async () => {
    for (const handle of handles.splice(0)) handle.disable();
    await sdk?.provider.shutdown();
    sdk = undefined;
  });
  const current = (): NonNullable<typeof sdk> => {
    if (sdk === undefined) {
      const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
      sdk = { exporter, provider: new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })] }) };
    }
    return sdk;
  };
  const lockMetrics: LockMetrics = {
    get provider() {
      return current().provider;
    },
    enable(options = { meterProvider: current().provider }) {
      const handle = enableLockMetrics(options);
      handles.push(handle);
      return handle;
    },
    async metrics() {
      const { provider, exporter } = current();
      await provider.forceFlush();
      return exporter.getMetrics().at(-1)?.scopeMetrics.flatMap((scope) => scope.metrics) ?? [];
    },
    async points<T = number>(name: string) {
      const metrics = await lockMetrics.metrics();
      return (metrics.find((metric) => metric.descriptor.name === name)?.dataPoints ?? []) as DataPoint<T>[];
    },
    async value<T = number>(name: string, attributes: Record<string, string>) {
      const points = await lockMetrics.points<T>(name);
      return points.find((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value))?.value;
    },
  };
  return lockMetrics;
}
