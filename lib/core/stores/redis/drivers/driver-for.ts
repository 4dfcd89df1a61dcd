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
export function driverFor(client: RedisClient): RedisDriver {
  let driver = drivers.get(client);
  if (driver === undefined) {
    driver = createDriver(client);
    drivers.set(client, driver);
  }
  return driver;
}

function createDriver(client: unknown): RedisDriver {
  // ioredis of either major, and iovalkey (its fork): the same API, the same driver.
  if (isIoRedisClient(client)) return new IoRedisDriver(client);
  const kind = nodeRedisKind(client);
  if (kind !== undefined) return new NodeRedisDriver(client as never, kind);
  if (isGlideClient(client)) return new GlideDriver(client);
  throw new TypeError('Not a Redis client: expected an ioredis or iovalkey Redis or Cluster, a node-redis client, cluster or Sentinel client, or a Valkey GLIDE client or cluster client.');
}
