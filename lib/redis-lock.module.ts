import { Module } from '@nestjs/common';
import { LockService } from './lock.service.js';
import { ConfigurableModuleClass } from './redis-lock.module-definition.js';

/**
 * Provides {@link LockService}. Import it once, with `forRoot()` or `forRootAsync()`;
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
  providers: [LockService],
  exports: [LockService],
})
export class RedisLockModule extends ConfigurableModuleClass {}
