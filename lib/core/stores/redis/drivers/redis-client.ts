import type { IoRedisClient } from './ioredis-driver.js';
import type { NodeRedisClient } from './node-redis-client.js';

/** A Redis client the store speaks through: ioredis (`Redis`, `Cluster`) or node-redis. */
export type RedisClient = IoRedisClient | NodeRedisClient;
