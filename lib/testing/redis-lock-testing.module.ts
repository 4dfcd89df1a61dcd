import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import type { ResolvedModuleOptions } from '../core/options/lock-options.js';
import type { RedisLockModuleOptions } from '../interfaces/redis-lock-options.interface.js';
import { LockConflictInterceptor } from '../lock-conflict.interceptor.js';
import { FencedRedis } from '../fencing/fenced-redis.js';
import { LockService } from '../lock.service.js';
import { LOCK_BACKEND_FACTORY } from '../redis-lock.constants.js';
import { REDIS_LOCK_MODULE_OPTIONS } from '../redis-lock.module-definition.js';
import { JobLockOrchestrator } from '../scheduling/job-lock.orchestrator.js';
import { LockSchedulingExplorer } from '../scheduling/lock-scheduling.explorer.js';
import { InMemoryLocks } from './in-memory-locks.js';

/** Options of {@link RedisLockTestingModule}: the module's options, without Redis. */
export interface RedisLockTestingOptions extends Omit<RedisLockModuleOptions, 'redis'> {
  /**
   * The store to keep locks in; modules given the same one exclude each other, as instances on
   * one Redis do. Default: `InMemoryLocks.shared`, one store for the whole process.
   */
  locks?: InMemoryLocks;
  /** Register `LockService` in every module. */
  isGlobal?: boolean;
}

/**
 * `RedisLockModule` without Redis: the same `LockService`, `FencedRedis` (its data in the store's memory), `@Locked`, job decorators, leader
 * elections, 409 mapping, events and errors, on an in-memory store with the semantics of the
 * Redis scripts. For unit tests of code that locks, and for a first run without Redis. It warns
 * when `NODE_ENV` is `production`: a lock in memory excludes callers of one process only.
 *
 * @example
 * ```ts
 * const moduleRef = await Test.createTestingModule({
 *   imports: [RedisLockTestingModule.forRoot({ isGlobal: true }), OrdersModule],
 * }).compile();
 * ```
 */
@Module({})
export class RedisLockTestingModule {
  static forRoot(options: RedisLockTestingOptions = {}): DynamicModule {
    const { locks = InMemoryLocks.shared, isGlobal = false, ...moduleOptions } = options;
    if (!(locks instanceof InMemoryLocks)) {
      throw new TypeError(`RedisLockTestingModule.forRoot(): Option "locks" must be an InMemoryLocks instance, got ${locks === null ? 'null' : typeof locks}.`);
    }
    if ('redis' in moduleOptions) {
      throw new TypeError('RedisLockTestingModule.forRoot(): Option "redis" is not taken here: locks are kept in memory. Use RedisLockModule.forRoot() for Redis.');
    }
    return {
      module: RedisLockTestingModule,
      global: isGlobal,
      imports: [DiscoveryModule],
      providers: [
        { provide: REDIS_LOCK_MODULE_OPTIONS, useValue: moduleOptions },
        { provide: LOCK_BACKEND_FACTORY, useValue: (resolved: ResolvedModuleOptions) => locks.backend(resolved) },
        { provide: InMemoryLocks, useValue: locks },
        LockService,
        { provide: FencedRedis, useFactory: () => new FencedRedis(locks) },
        { provide: APP_INTERCEPTOR, useClass: LockConflictInterceptor },
        JobLockOrchestrator,
        LockSchedulingExplorer,
        { provide: IN_PRODUCTION_WARNING, useFactory: warnInProduction },
      ],
      exports: [LockService, JobLockOrchestrator, InMemoryLocks, FencedRedis],
    };
  }
}

const IN_PRODUCTION_WARNING = Symbol('nestjs-redis-lock:in-memory-warning');

function warnInProduction(): boolean {
  if (process.env.NODE_ENV !== 'production') return false;
  new Logger('RedisLock').warn(
    'RedisLockTestingModule keeps locks in memory: they exclude callers of this process only, not other instances. ' +
      'Use RedisLockModule.forRoot({ redis }) in production.',
  );
  return true;
}
