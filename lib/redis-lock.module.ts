import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { withGlobalInterceptor } from './lock-conflict.interceptor.js';
import { FENCED_REDIS_PROVIDER } from './fencing/fenced-redis.provider.js';
import { FencedRedis } from './fencing/fenced-redis.js';
import { LockService } from './lock.service.js';
import {
  ASYNC_OPTIONS_TYPE,
  checkAsyncOptions,
  ConfigurableModuleClass,
  DEFAULT_MODULE_EXTRAS,
  OPTIONS_TYPE,
  REDIS_LOCK_MODULE_METHOD,
  readForRootOptions,
  REDIS_LOCK_MODULE_OPTIONS,
  withCheckedOptionsFactory,
} from './redis-lock.module-definition.js';
import { JobLockOrchestrator } from './scheduling/job-lock.orchestrator.js';
import { LockSchedulingExplorer } from './scheduling/lock-scheduling.explorer.js';
import { LeadershipService } from './scheduling/leadership.service.js';
import { MODULE_OPTION_NAMES } from './core/options/lock-options.js';

/**
 * Provides {@link LockService}, {@link FencedRedis} (fenced writes on the module's connection), a global interceptor that answers 409 Conflict when a route
 * meets a busy lock (see `@Locked`), and runs the scheduled-job decorators
 * (`@WithoutOverlapping`, `@OnOneInstance`) and `@LeaderElection` classes it finds. Import it once, with `forRoot()` or `forRootAsync()`;
 * `isGlobal: true` makes `LockService` injectable in every module. `globalInterceptor: false`
 * leaves the 409/503 mapping to the application: `@UseInterceptors(LockConflictInterceptor)`
 * on the controllers that want it.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     RedisLockModule.forRootAsync({
 *       isGlobal: true,
 *       imports: [ConfigModule],
 *       inject: [ConfigService],
 *       useFactory: (config: ConfigService) => ({ redis: config.getOrThrow('REDIS_URL'), ttl: 10_000 }),
 *     }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 */
@Module({
  imports: [DiscoveryModule],
  providers: [LockService, JobLockOrchestrator, LockSchedulingExplorer, LeadershipService, FENCED_REDIS_PROVIDER],
  // The orchestrator is injected into classes with @WithoutOverlapping / @OnOneInstance methods;
  // the options into a LockConflictInterceptor applied per controller.
  exports: [LockService, JobLockOrchestrator, LeadershipService, FencedRedis, REDIS_LOCK_MODULE_OPTIONS],
})
export class RedisLockModule extends ConfigurableModuleClass {
  static override forRoot(options: typeof OPTIONS_TYPE): DynamicModule {
    // Nest copies the options' own names only: a config class's getters would be dropped.
    const read = readForRootOptions(options, 'RedisLockModule.forRoot()', [...MODULE_OPTION_NAMES, ...Object.keys(DEFAULT_MODULE_EXTRAS)]);
    return withGlobalInterceptor(saying('RedisLockModule.forRoot()', super.forRoot(read)), read.globalInterceptor);
  }

  static override forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
    checkAsyncOptions(options, 'RedisLockModule.forRootAsync()', {
      returned: MODULE_OPTION_NAMES,
      beside: Object.keys(DEFAULT_MODULE_EXTRAS),
      says: { what: 'the module options', example: 'redis', direct: 'forRoot()' },
    });
    const definition = withCheckedOptionsFactory(super.forRootAsync(options), options, REDIS_LOCK_MODULE_OPTIONS, 'RedisLockModule.forRootAsync()');
    return withGlobalInterceptor(saying('RedisLockModule.forRootAsync()', definition), options.globalInterceptor);
  }
}

/** The module, telling `LockService` where its options came from (for the messages of their errors). */
function saying(method: string, definition: DynamicModule): DynamicModule {
  return { ...definition, providers: [...(definition.providers ?? []), { provide: REDIS_LOCK_MODULE_METHOD, useValue: method }] };
}
