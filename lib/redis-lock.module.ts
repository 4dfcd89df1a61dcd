import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { FENCED_REDIS_PROVIDER } from './fencing/fenced-redis.provider.js';
import { FencedRedis } from './fencing/fenced-redis.js';
import { LockConflictInterceptor } from './lock-conflict.interceptor.js';
import { LockService } from './lock.service.js';
import { ConfigurableModuleClass } from './redis-lock.module-definition.js';
import { JobLockOrchestrator } from './scheduling/job-lock.orchestrator.js';
import { LockSchedulingExplorer } from './scheduling/lock-scheduling.explorer.js';

/**
 * Provides {@link LockService}, {@link FencedRedis} (fenced writes on the module's connection), a global interceptor that answers 409 Conflict when a route
 * meets a busy lock (see `@Locked`), and runs the scheduled-job decorators
 * (`@WithoutOverlapping`, `@OnOneInstance`) and `@LeaderElection` classes it finds. Import it once, with `forRoot()` or `forRootAsync()`;
 * `isGlobal: true` makes `LockService` injectable in every module.
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
  providers: [LockService, { provide: APP_INTERCEPTOR, useClass: LockConflictInterceptor }, JobLockOrchestrator, LockSchedulingExplorer, FENCED_REDIS_PROVIDER],
  // The orchestrator is injected into classes with @WithoutOverlapping / @OnOneInstance methods.
  exports: [LockService, JobLockOrchestrator, FencedRedis],
})
export class RedisLockModule extends ConfigurableModuleClass {}
