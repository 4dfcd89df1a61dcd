import { Inject, Logger, Module, Optional, type DynamicModule, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { neverThrowingLogger } from '../core/engine/never-throwing-logger.js';
import { checkMetricsOptions, enableLockMetrics, type LockMetricsHandle, type LockMetricsOptions } from './lock-metrics.js';

// Its text is the one part of Nest's error that the library controls when the class is imported
// without forRoot() (`imports: [RedisLockMetricsModule]`): it says what to do.
const LOCK_METRICS_OPTIONS = 'nestjs-redis-lock:options of RedisLockMetricsModule: import RedisLockMetricsModule.forRoot(), not the class RedisLockMetricsModule alone';

/**
 * Records OpenTelemetry metrics of every lock while the application runs (see
 * {@link enableLockMetrics} for the instruments). Start the OpenTelemetry SDK before the
 * application, as usual, and import it in the root module: one a route loads with
 * `LazyModuleLoader` records nothing (Nest runs no hook of such a module), which is warned of.
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

  constructor(
    @Inject(LOCK_METRICS_OPTIONS) private readonly options: LockMetricsOptions,
    @Optional() @Inject(HttpAdapterHost) http?: HttpAdapterHost,
  ) {
    // Made while the server already listens: a module a route loaded with LazyModuleLoader, whose
    // hooks Nest never runs. Recording from here could not be stopped at app.close().
    if (http?.listening === true) {
      neverThrowingLogger(new Logger('RedisLock')).warn(
        'RedisLockMetricsModule was loaded after the HTTP server started listening (by LazyModuleLoader): Nest runs no lifecycle hook of a module loaded so, ' +
          'and lock metrics are not recorded. Import RedisLockMetricsModule.forRoot() in the root module.',
      );
    }
  }

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
