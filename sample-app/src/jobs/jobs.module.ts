import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { JobsController } from './jobs.controller.js';
import { PriceFeed } from './price-feed.js';
import { StockCountJob } from './stock-count.job.js';

@Module({
  imports: [ScheduleModule.forRoot()],
  controllers: [JobsController],
  providers: [StockCountJob, PriceFeed],
})
export class JobsModule {}
