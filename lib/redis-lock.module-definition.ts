import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RedisLockModuleOptions } from './interfaces/redis-lock-options.interface.js';

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: REDIS_LOCK_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<RedisLockModuleOptions>({ moduleName: 'RedisLock' })
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
