import type { RedisClient } from './redis-client.js';
import { isGlideClient } from './glide-client.js';
import { GlideDriver } from './glide-driver.js';
import { IoRedisDriver, isIoRedisClient } from './ioredis-driver.js';
import { nodeRedisKind } from './node-redis-client.js';
import { NodeRedisDriver } from './node-redis-driver.js';
import type { RedisDriver } from './redis-driver.js';

const drivers = new WeakMap<object, RedisDriver>();

/**
 * The driver of a client, by the client's shape: one per client, shared by the store, the
 * release notifier, the lock board and the health indicator.
 */
export function driverFor(client: RedisClient, option = 'redis'): RedisDriver {
  let driver = drivers.get(client);
  if (driver === undefined) {
    driver = createDriver(client, option);
    drivers.set(client, driver);
  }
  return driver;
}

/** `option`: the module option the client was given as (`redis`, `redis[2]`), for a refusal. */
function createDriver(client: unknown, option: string): RedisDriver {
  // ioredis of either major, and iovalkey (its fork): the same API, the same driver.
  if (isIoRedisClient(client)) return new IoRedisDriver(client, option);
  const kind = nodeRedisKind(client);
  if (kind !== undefined) return new NodeRedisDriver(client as never, kind);
  if (isGlideClient(client)) return new GlideDriver(client, option);
  throw new TypeError('Not a Redis client: expected an ioredis or iovalkey Redis or Cluster, a node-redis client, cluster or Sentinel client, or a Valkey GLIDE client or cluster client.');
}
