import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';

/**
 * Balances in Redis (or, without Redis, in memory behind a pause like a round trip's), read and
 * written separately on purpose: a read-modify-write spread over two round trips and a pause is
 * exactly what a lock has to protect.
 */
@Injectable()
export class BalanceStore implements OnApplicationShutdown {
  private readonly redis?: Redis;
  private readonly memory = new Map<string, number>();

  constructor(config: AppConfig) {
    if (config.store === 'redis') this.redis = new Redis(config.redisUrl);
  }

  async read(accountId: string): Promise<number> {
    if (this.redis === undefined) return roundTrip(this.memory.get(accountId) ?? 0);
    return Number((await this.redis.get(`sample:balance:${accountId}`)) ?? '0');
  }

  async write(accountId: string, balance: number): Promise<void> {
    if (this.redis === undefined) {
      await roundTrip(undefined);
      this.memory.set(accountId, balance);
      return;
    }
    await this.redis.set(`sample:balance:${accountId}`, String(balance));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit();
  }
}

function roundTrip<T>(value: T): Promise<T> {
  return new Promise((resolve) => setImmediate(() => resolve(value)));
}
