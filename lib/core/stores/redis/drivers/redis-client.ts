import type { ValkeyGlideClient } from './glide-client.js';
import type { IoRedisClient } from './ioredis-driver.js';
import type { IoValkeyClient } from './iovalkey-client.js';
import type { NodeRedisClient } from './node-redis-client.js';

/** A Redis client the store speaks through: ioredis (`Redis`, `Cluster`), iovalkey, node-redis or Valkey GLIDE. */
export type RedisClient = IoRedisClient | IoValkeyClient | NodeRedisClient | ValkeyGlideClient;
