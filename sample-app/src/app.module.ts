import { Module } from '@nestjs/common';
import { RedisLockModule } from 'nestjs-redis-lock';
import { RedisLockTestingModule } from 'nestjs-redis-lock/testing';
import { AccountsModule } from './accounts/accounts.module.js';
import { AppConfig, configuredStore } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { JobsModule } from './jobs/jobs.module.js';
import { LockActivity } from './locks/lock-activity.js';
import { LocksController } from './locks/locks.controller.js';
import { ReportsController } from './reports/reports.controller.js';
import { ReportsService } from './reports/reports.service.js';

@Module({
  imports: [
    ConfigModule,
    // Without Redis (a first run with nothing but Node), the same locks on the in-memory store:
    // they exclude callers of this one process only.
    configuredStore() === 'memory'
      ? RedisLockTestingModule.forRoot({ isGlobal: true, keyPrefix: 'sample-lock:' })
      : RedisLockModule.forRootAsync({
          isGlobal: true,
          inject: [AppConfig],
          // The demo names its accounts and reports per run: with the default retention (kept
          // forever) each run would leave their fencing counters in your Redis for good. An idle
          // counter that expires is safe: the key's next one starts above its tokens.
          useFactory: (config: AppConfig) => ({ redis: config.redisUrl, keyPrefix: 'sample-lock:', fenceRetention: '1m' }),
        }),
    AccountsModule,
    JobsModule,
  ],
  controllers: [ReportsController, LocksController],
  providers: [ReportsService, LockActivity],
})
export class AppModule {}
