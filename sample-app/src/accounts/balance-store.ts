import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';

/**
 * Balances in Redis, read and written separately on purpose: a read-modify-write spread over
 * two round trips and a pause is exactly what a lock has to protect.
 */
@Injectable()
export class BalanceStore implements OnApplicationShutdown {
  private readonly redis: Redis;

  constructor(config: AppConfig) {
    this.redis = new Redis(config.redisUrl);
  }

  async read(accountId: string): Promise<number> {
    return Number((await this.redis.get(`sample:balance:${accountId}`)) ?? '0');
  }

  async write(accountId: string, balance: number): Promise<void> {
    await this.redis.set(`sample:balance:${accountId}`, String(balance));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit();
  }
}
