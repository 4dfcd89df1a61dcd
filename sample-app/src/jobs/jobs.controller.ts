import { Controller, Get } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { PriceFeed } from './price-feed.js';
import { StockCountJob } from './stock-count.job.js';

@Controller('jobs')
export class JobsController {
  constructor(
    private readonly config: AppConfig,
    private readonly stockCount: StockCountJob,
    private readonly feed: PriceFeed,
  ) {}

  /** What this instance ran and led: the demo asks each instance and puts it together. */
  @Get()
  state() {
    return { instance: this.config.instance, stockCount: this.stockCount.runs, feed: { leading: this.feed.leading, terms: this.feed.terms } };
  }
}
