import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MODULE_OPTION_NAMES, resolveModuleOptions, type ResolvedModuleOptions } from '../core/options/lock-options.js';
import type { RedisLockModuleExtras, RedisLockModuleOptions } from '../interfaces/redis-lock-options.interface.js';
import { withGlobalInterceptor } from '../lock-conflict.interceptor.js';
import { FencedRedis } from '../fencing/fenced-redis.js';
import { LockService } from '../lock.service.js';
import { LOCK_BACKEND_FACTORY, LOCK_RUNNER } from '../redis-lock.constants.js';
import type { LockManager } from '../core/engine/lock-manager.js';
import { FENCED_CLOSED, FENCED_STORE } from '../fencing/memory-fenced-store.js';
import {
  checkAsyncOptions,
  checkOptionsObject,
  DEFAULT_MODULE_EXTRAS,
  readForRootOptions,
  REDIS_LOCK_MODULE_METHOD,
  REDIS_LOCK_MODULE_OPTIONS,
  withCheckedOptionsFactory,
} from '../redis-lock.module-definition.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { JobLockOrchestrator } from '../scheduling/job-lock.orchestrator.js';
import { LockSchedulingExplorer } from '../scheduling/lock-scheduling.explorer.js';
import { LeadershipService } from '../scheduling/leadership.service.js';
import { InMemoryLocks } from './in-memory-locks.js';
import {
  ConfigurableTestingModuleClass,
  REDIS_LOCK_TESTING_OPTIONS,
  TESTING_ASYNC_OPTIONS_TYPE,
  TESTING_OPTIONS_TYPE,
  type RedisLockTestingModuleOptions,
} from './redis-lock-testing.module-definition.js';

export type { RedisLockTestingModuleOptions } from './redis-lock-testing.module-definition.js';

/** Options of {@link RedisLockTestingModule.forRoot}: the module's options without Redis, a store, and the module's extras. */
export interface RedisLockTestingOptions extends RedisLockTestingModuleOptions, RedisLockModuleExtras {}

/**
 * `RedisLockModule` without Redis: the same `LockService`, `FencedRedis` (its data in the store's memory), `@Locked`, job decorators, leader
 * elections, 409 mapping, events and errors, on an in-memory store with the semantics of the
 * Redis scripts. For unit tests of code that locks, and for a first run without Redis. It warns
 * when `NODE_ENV` is `production`: a lock in memory excludes callers of one process only.
 * `forRootAsync()` takes the options from a factory, as `RedisLockModule.forRootAsync()` does.
 *
 * @example
 * ```ts
 * const moduleRef = await Test.createTestingModule({
 *   imports: [RedisLockTestingModule.forRoot({ isGlobal: true }), OrdersModule],
 * }).compile();
 *
 * RedisLockTestingModule.forRootAsync({
 *   isGlobal: true,
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ ttl: config.get('LOCK_TTL') }),
 * });
 * ```
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    { provide: InMemoryLocks, useFactory: storeOf, inject: [REDIS_LOCK_TESTING_OPTIONS] },
    { provide: REDIS_LOCK_MODULE_OPTIONS, useFactory: moduleOptionsOf, inject: [REDIS_LOCK_TESTING_OPTIONS, REDIS_LOCK_MODULE_METHOD] },
    { provide: LOCK_BACKEND_FACTORY, useFactory: backendFactoryOf, inject: [InMemoryLocks] },
    LockService,
    JobLockOrchestrator,
    LockSchedulingExplorer,
    LeadershipService,
    { provide: FencedRedis, useFactory: fencedRedisOf, inject: [InMemoryLocks, LockService] },
    { provide: Symbol('nestjs-redis-lock:in-memory-warning'), useFactory: warnInProduction },
  ],
  exports: [LockService, JobLockOrchestrator, LeadershipService, InMemoryLocks, FencedRedis, REDIS_LOCK_MODULE_OPTIONS],
})
export class RedisLockTestingModule extends ConfigurableTestingModuleClass {
  static override forRoot(options: typeof TESTING_OPTIONS_TYPE = {}): DynamicModule {
    // Nest copies the options' own names only: a config class's getters would be dropped. `redis`
    // is read too, to be refused as an object literal's is.
    const read = readForRootOptions(options, 'RedisLockTestingModule.forRoot()', [...TESTING_OPTION_NAMES, 'redis', ...Object.keys(DEFAULT_MODULE_EXTRAS)]);
    checkTestingOptions(read, 'forRoot');
    return withGlobalInterceptor(saying('forRoot', super.forRoot(read)), read.globalInterceptor);
  }

  static override forRootAsync(options: typeof TESTING_ASYNC_OPTIONS_TYPE): DynamicModule {
    checkAsyncOptions(options, 'RedisLockTestingModule.forRootAsync()', {
      returned: TESTING_OPTION_NAMES,
      beside: Object.keys(DEFAULT_MODULE_EXTRAS),
      says: { what: 'the module options', example: 'ttl', direct: 'forRoot()' },
    });
    const definition = withCheckedOptionsFactory(super.forRootAsync(options), options, REDIS_LOCK_TESTING_OPTIONS, 'RedisLockTestingModule.forRootAsync()');
    return withGlobalInterceptor(saying('forRootAsync', definition), options.globalInterceptor);
  }
}

/** The module, telling the options' check which method they were given to (Nest hands on a copy of `forRoot()`'s). */
function saying(method: 'forRoot' | 'forRootAsync', definition: DynamicModule): DynamicModule {
  return { ...definition, providers: [...(definition.providers ?? []), { provide: REDIS_LOCK_MODULE_METHOD, useValue: `RedisLockTestingModule.${method}()` }] };
}

/** The testing module's own options: `RedisLockModule`'s without `redis`, and `locks`. */
const TESTING_OPTION_NAMES: readonly string[] = ['locks', ...MODULE_OPTION_NAMES.filter((name) => name !== 'redis')];
const TESTING_OPTIONS = new Set(TESTING_OPTION_NAMES);

function checkTestingOptions(options: RedisLockTestingModuleOptions, method: 'forRoot' | 'forRootAsync'): void {
  const where = `RedisLockTestingModule.${method}()`;
  checkOptionsObject(options, where);
  const { locks } = options;
  if (locks !== undefined && !(locks instanceof InMemoryLocks)) {
    throw new InvalidLockOptionsError('locks', locks, 'an InMemoryLocks instance').within(where);
  }
  if ('redis' in options) {
    throw new InvalidLockOptionsError('redis', options.redis, 'left out here: locks are kept in memory (use RedisLockModule.forRoot() for Redis)').within(where);
  }
  // A factory's result is read after the module was made: these shape it, as RedisLockModule's do.
  if (method === 'forRootAsync') {
    for (const extra of ['isGlobal', 'globalInterceptor'] as const) {
      if (extra in options) throw new InvalidLockOptionsError(extra, (options as Record<string, unknown>)[extra], 'given beside useFactory in forRootAsync(), not returned by the factory (it shapes the module, which is made before the factory runs)').within(where);
    }
  }
  // Checked here, not by RedisLockModule's list, which offers redis and lacks locks.
  for (const name of Object.keys(options)) {
    if (TESTING_OPTIONS.has(name) || name === 'isGlobal' || name === 'globalInterceptor') continue;
    const names = [...TESTING_OPTION_NAMES, 'isGlobal', 'globalInterceptor'].join(', ');
    throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], `left out: it is no option of the testing module (its options are ${names})`).within(where);
  }
}

/**
 * The options `LockService` takes: the testing module's without the store and the extras,
 * checked here, when the module is compiled, so that a bad one names the method it came from.
 */
function moduleOptionsOf(options: RedisLockTestingModuleOptions, where: string): RedisLockModuleOptions {
  const method = where.includes('forRootAsync') ? 'forRootAsync' : 'forRoot';
  checkTestingOptions(options, method);
  const { locks: _locks, isGlobal: _isGlobal, globalInterceptor: _globalInterceptor, ...moduleOptions } = options as RedisLockTestingOptions;
  try {
    resolveModuleOptions(moduleOptions as RedisLockModuleOptions, { needsRedis: false });
  } catch (error) {
    throw error instanceof InvalidLockOptionsError ? error.within(`RedisLockTestingModule.${method}()`) : error;
  }
  return moduleOptions as RedisLockModuleOptions;
}

function storeOf(options: RedisLockTestingModuleOptions): InMemoryLocks {
  return options?.locks instanceof InMemoryLocks ? options.locks : InMemoryLocks.shared;
}

function backendFactoryOf(locks: InMemoryLocks) {
  return (resolved: ResolvedModuleOptions) => locks.backend(resolved);
}

/**
 * The module's `FencedRedis`: the store's fenced memory, refusing every call once the application
 * closed, as `RedisLockModule`'s does (its connection closed, see fenced-redis.provider.ts), so
 * that a write made after shutdown fails in the app's tests as it would deployed. A
 * `new FencedRedis(locks)` of the user's own is the store's, no application's.
 */
function fencedRedisOf(locks: InMemoryLocks, service: LockService): FencedRedis {
  const source = {
    [FENCED_CLOSED]: (): boolean => (service[LOCK_RUNNER] as LockManager).connectionsClosed,
    [FENCED_STORE]: () => locks[FENCED_STORE](),
  };
  return new FencedRedis(source as unknown as InMemoryLocks);
}

function warnInProduction(): boolean {
  if (process.env.NODE_ENV !== 'production') return false;
  new Logger('RedisLock').warn(
    'RedisLockTestingModule keeps locks in memory: they exclude callers of this process only, not other instances. ' +
      'Use RedisLockModule.forRoot({ redis }) in production.',
  );
  return true;
}
