import { createClientPool as createPool6 } from 'redis';
import { createClientPool as createPool5 } from 'redis5';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Found by review (drivers). node-redis 5 and 6 have `createClientPool()` (a pool of connections, the way
 * node-redis 5 recommends for isolation). The driver tells node-redis clients by shape
 * (node-redis-client.ts): a pool has `sendCommand`, `connect` and `isOpen`, so it is taken for a
 * plain `createClient()`. A pool has no `duplicate()`, so the driver takes it for node-redis 5's
 * Sentinel client and subscribes on it (node-redis-driver.ts `sharedSubscriber`), but a pool has
 * no `subscribe()` either: every waiter's SUBSCRIBE fails with a TypeError, logged as a WARN once
 * per lock key ("Subscribing to ... failed (connection.subscribe is not a function)"), retried
 * every 4 s for as long as it has waiters, and no waiter ever gets a release message. Either the
 * pool is refused at startup (it is not a client the docs list), or its waiters are served: it
 * is refused now.
 */
type Pool = { on(event: 'error', listener: () => void): unknown; connect(): Promise<unknown>; close(): Promise<unknown> };
const POOLS: Record<string, (url: string) => Pool> = {
  'node-redis 6': (url) => createPool6({ url }) as unknown as Pool,
  'node-redis 5': (url) => createPool5({ url }) as unknown as Pool,
};

describe.each(Object.keys(POOLS))('a %s client pool handed in', (name) => {
  const own = useOwnRedis();

  it('is refused at startup, naming the option (its waiters could never subscribe)', { timeout: 20_000 }, async () => {
    const pool = POOLS[name]!(own.url());
    pool.on('error', () => undefined);
    await pool.connect();
    try {
      const refused = await createLockApp({ redis: pool as never }).then(
        async (app) => {
          await app.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(InvalidLockOptionsError);
      expect((refused as Error).message).toMatch(/Option "redis".*client pool \(createClientPool\(\)\) cannot carry release messages/);
    } finally {
      await pool.close();
    }
  });
});
