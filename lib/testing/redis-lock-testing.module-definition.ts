import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RedisLockModuleExtras, RedisLockModuleOptions } from '../interfaces/redis-lock-options.interface.js';
import { applyModuleExtras, DEFAULT_MODULE_EXTRAS, optionsToken } from '../redis-lock.module-definition.js';
import type { InMemoryLocks } from './in-memory-locks.js';

/** What `RedisLockTestingModule`'s factory returns: the module's options without Redis, and a store. */
export interface RedisLockTestingModuleOptions extends Omit<RedisLockModuleOptions, 'redis'> {
  /**
   * The store to keep locks in; modules given the same one exclude each other, as instances on
   * one Redis do. Default: `InMemoryLocks.shared`, one store for the whole process.
   */
  locks?: InMemoryLocks;
}

export const {
  ConfigurableModuleClass: ConfigurableTestingModuleClass,
  MODULE_OPTIONS_TOKEN: REDIS_LOCK_TESTING_OPTIONS,
  OPTIONS_TYPE: TESTING_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: TESTING_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<RedisLockTestingModuleOptions>({ moduleName: 'RedisLockTesting', optionsInjectionToken: optionsToken('RedisLockTestingModule') })
  .setClassMethodName('forRoot')
  .setExtras<RedisLockModuleExtras>(DEFAULT_MODULE_EXTRAS, applyModuleExtras('RedisLockTestingModule'))
  .build();
