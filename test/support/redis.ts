import { Redis } from 'ioredis';
import { afterAll, beforeEach, inject } from 'vitest';

/**
 * URL of the test server, on a database of this worker's own (1-15), so that test files running
 * in parallel workers never see or flush each other's keys.
 */
export function redisUrl(): string {
  const url = new URL(inject('redisUrl'));
  const worker = Number(process.env.VITEST_POOL_ID ?? '1');
  url.pathname = `/${((worker - 1) % 15) + 1}`;
  return url.toString();
}

/**
 * A plain client for looking at Redis from the outside, flushed before every test of the file
 * that calls this.
 */
export function useRedis(): Redis {
  const redis = new Redis(redisUrl(), { lazyConnect: false });
  beforeEach(async () => {
    await redis.flushdb();
  });
  afterAll(async () => {
    await redis.quit();
  });
  return redis;
}
