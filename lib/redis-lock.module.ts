import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { LockConflictInterceptor } from './lock-conflict.interceptor.js';
import { LockService } from './lock.service.js';
import { ConfigurableModuleClass } from './redis-lock.module-definition.js';

/**
 * Provides {@link LockService}, and a global interceptor that answers 409 Conflict when a
 * route meets a busy lock (see `@Locked`). Import it once, with `forRoot()` or `forRootAsync()`;
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
  providers: [LockService, { provide: APP_INTERCEPTOR, useClass: LockConflictInterceptor }],
  exports: [LockService],
})
export class RedisLockModule extends ConfigurableModuleClass {}
