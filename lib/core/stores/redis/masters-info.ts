import { driverFor } from './drivers/driver-for.js';
import type { RedisClient } from './drivers/redis-client.js';

/** `INFO <section>` of each master the client reaches (the one server outside a Cluster), for the startup checks. */
export function mastersInfo(client: RedisClient, section: string): Promise<string[]> {
  return driverFor(client)
    .masters()
    .then((masters) => Promise.all(masters.map((master) => master.info(section))));
}
