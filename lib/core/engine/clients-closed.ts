import { driverFor } from '../stores/redis/drivers/driver-for.js';
import type { RedisClient } from '../stores/redis/drivers/redis-client.js';

/**
 * Whether every Redis client behind the store was closed (by its owner, for a client handed in;
 * see `RedisDriver.closed`): nothing can be sent any more, so a failure is no reason to send
 * again. Asked only after a failure, never on the way of a call Redis answers. None in memory.
 */
export function clientsClosed(clients: readonly RedisClient[]): boolean {
  return clients.length > 0 && clients.every((client) => driverFor(client).closed());
}
