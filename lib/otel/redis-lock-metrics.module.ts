import { Inject, Module, type DynamicModule, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { checkMetricsOptions, enableLockMetrics, type LockMetricsHandle, type LockMetricsOptions } from './lock-metrics.js';

// Its text is the one part of Nest's error that the library controls when the class is imported
// without forRoot() (`imports: [RedisLockMetricsModule]`): it says what to do.
const LOCK_METRICS_OPTIONS = 'nestjs-redis-lock:options of RedisLockMetricsModule: import RedisLockMetricsModule.forRoot(), not the class RedisLockMetricsModule alone';

/**
 * Records OpenTelemetry metrics of every lock while the application runs (see
 * {@link enableLockMetrics} for the instruments). Start the OpenTelemetry SDK before the
 * application, as usual.
 *
 * @example
 * ```ts
 * import { RedisLockMetricsModule } from 'nestjs-redis-lock/otel';
 *
 * @Module({ imports: [RedisLockModule.forRoot({ redis: url }), RedisLockMetricsModule.forRoot()] })
 * export class AppModule {}
 * ```
 */
@Module({})
export class RedisLockMetricsModule implements OnModuleInit, OnApplicationShutdown {
  private handle?: LockMetricsHandle;

  constructor(@Inject(LOCK_METRICS_OPTIONS) private readonly options: LockMetricsOptions) {}

  static forRoot(options: LockMetricsOptions = {}): DynamicModule {
    checkMetricsOptions(options, 'RedisLockMetricsModule.forRoot()');
    return { module: RedisLockMetricsModule, providers: [{ provide: LOCK_METRICS_OPTIONS, useValue: options }] };
  }

  onModuleInit(): void {
    this.handle = enableLockMetrics(this.options);
  }

  onApplicationShutdown(): void {
    this.handle?.disable();
  }
}
