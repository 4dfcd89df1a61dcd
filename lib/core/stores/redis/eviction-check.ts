import { mastersInfo } from './masters-info.js';
import type { LockLogger } from '../../engine/lock-logger.js';
import type { RedisClient } from './drivers/redis-client.js';

/**
 * Warns when a Redis that keeps locks may evict keys: with `maxmemory` set and a policy other
 * than `noeviction`, Redis may drop a held lock's key under memory pressure (all the more when
 * it also serves as a cache), and the next caller is let in while the holder still works: two
 * holders until the holder's next renewal. Reads `INFO memory`, which the least-privilege user
 * may run; a failure to read it says nothing.
 */
export function warnIfEvicting(clients: readonly RedisClient[], logger: LockLogger): void {
  for (const client of clients) {
    void mastersInfo(client, 'memory')
      .then((infos) => {
        const evicting = infos.map(evictionPolicy).find((policy) => policy !== undefined);
        if (evicting === undefined) return;
        logger.warn(
          `Redis may evict lock keys (maxmemory ${evicting.maxmemory} bytes, maxmemory-policy ${evicting.policy}): a held lock can vanish ` +
            'under memory pressure and a second holder get in. Set maxmemory-policy noeviction on the Redis that keeps locks (or give locks a Redis of their own).',
        );
      })
      .catch(() => undefined);
  }
}

function evictionPolicy(info: string): { maxmemory: number; policy: string } | undefined {
  const maxmemory = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? '0');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (maxmemory === 0 || policy === undefined || policy === 'noeviction') return undefined;
  return { maxmemory, policy };
}
