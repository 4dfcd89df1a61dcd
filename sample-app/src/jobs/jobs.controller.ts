import { Controller, Get, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { PriceFeed } from './price-feed.js';
import { StockCountJob } from './stock-count.job.js';

@Controller('jobs')
export class JobsController implements OnApplicationShutdown {
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

  /**
   * The same, once more as the instance stops: by then its last run has ended and its feed term
   * closed (the library waits for runs and tells the leader before this hook), which the demo
   * can no longer ask over HTTP.
   */
  onApplicationShutdown(): void {
    console.log(`sample-app final state ${JSON.stringify(this.state())}`);
  }
}
