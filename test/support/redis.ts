import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.js';

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

/** Clients subscribed to `channel` on `node` (`PUBSUB NUMSUB`): a waiter's release subscription shows here. */
export async function subscribers(node: Redis, channel: string): Promise<number> {
  return Number(((await node.call('PUBSUB', 'NUMSUB', channel)) as [string, number])[1]);
}

/**
 * Clients subscribed to the shard channel `channel` on `node` (`PUBSUB SHARDNUMSUB`): in a
 * Redis 7 cluster a waiter subscribes on its key's shard only.
 */
export async function shardSubscribers(node: Redis, channel: string): Promise<number> {
  return Number(((await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1]);
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

/**
 * A redis-server of the test file's own, for tests that block or freeze Redis: a block of the
 * shared server would hold up, for as long, the renewals of test files running beside them in
 * other workers (a 1.5 s block costs a 900 ms lock its lease). `redis()` is a plain client on it,
 * flushed before every test of the file.
 */
export function useOwnRedis(): { url: () => string; redis: () => Redis; server: () => RedisServer } {
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
    client = new Redis(server.url);
  });
  beforeEach(async () => {
    await client!.flushdb();
  });
  afterAll(async () => {
    await client?.quit();
    await server?.stop();
  });
  return { url: () => server!.url, redis: () => client!, server: () => server! };
}
