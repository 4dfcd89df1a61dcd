import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { LockService, OnOneInstance, WithoutOverlapping } from 'nestjs-redis-lock';

export interface StockCountRun {
  /** The cron second this run belongs to (epoch seconds). */
  tick: number;
  fencingToken: number;
  startedAt: number;
  endedAt?: number;
}

/** Lease of the job's owner and run locks: short, so that a handover shows quickly. */
export const STOCK_COUNT_TTL = '3s';

/**
 * Every second, one instance of the app counts the stock: the first one to run the job owns
 * it (`@OnOneInstance`), and a count that overruns its second makes the next ticks skip
 * (`@WithoutOverlapping`), on every instance.
 */
@Injectable()
export class StockCountJob {
  readonly runs: StockCountRun[] = [];

  constructor(private readonly locks: LockService) {}

  @Cron('* * * * * *', { name: 'stock-count' })
  @OnOneInstance({ key: 'stock-count', ttl: STOCK_COUNT_TTL })
  @WithoutOverlapping()
  async count(): Promise<void> {
    const run: StockCountRun = { tick: Math.floor(Date.now() / 1000), fencingToken: this.locks.current()!.fencingToken, startedAt: Date.now() };
    this.runs.push(run);
    // Every fourth count is a slow one (a month-end full count): it overruns the next tick.
    const slow = this.runs.length % 4 === 0;
    await new Promise((resolve) => setTimeout(resolve, slow ? 1_600 : 200));
    run.endedAt = Date.now();
  }
}
