import { createClient as createClient6 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { NodeRedisDriver } from '../../lib/core/stores/redis/drivers/node-redis-driver.js';
import type { NodeRedisClient } from '../../lib/core/stores/redis/drivers/node-redis-client.js';
import type { Factory } from '../support/node-redis.js';
import { startRedisServer } from '../support/redis-server.js';

/**
 * Found by review. The release subscriber (a `duplicate()` of the node-redis client handed in,
 * reconnected by the library) gives a channel up when its last waiter leaves. Given up while
 * Redis was down, the UNSUBSCRIBE was rejected with the next failed reconnect, node-redis kept the
 * channel's listener, and subscribed it again once Redis was back, for good: the library had
 * forgotten it. With keys that name entities, such channels piled up at every outage. Now a
 * channel given up that way is given up again once the connection is back.
 */
describe('the node-redis release subscriber, a channel given up while Redis is down', () => {
  it.each([
    [6, createClient6 as unknown as Factory],
    [5, createClient5 as unknown as Factory],
  ] as const)('is not subscribed again once Redis is back (node-redis %i)', { timeout: 30_000 }, async (_version, create) => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop());
    const client = create({ socket: { host: '127.0.0.1', port: server.port, reconnectStrategy: () => 200 } });
    client.on('error', () => undefined);
    await client.connect();
    onTestFinished(async () => {
      await client.close().catch(() => undefined);
    });
    const subscriber = new NodeRedisDriver(client as unknown as NodeRedisClient, 'client').subscriber(() => undefined);
    onTestFinished(() => subscriber.close());
    await subscriber.subscribe('left', false);
    await subscriber.subscribe('kept', false);
    const channels = async (): Promise<string[]> => {
      const admin = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      try {
        return ((await admin.pubsub('CHANNELS')) as string[]).sort();
      } finally {
        admin.disconnect();
      }
    };
    expect(await channels()).toEqual(['kept', 'left']);
    // Redis goes away: connections dropped, new ones refused.
    await server.stop({ kill: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const gaveUp = subscriber.unsubscribe('left', false).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 700));
    await server.start();
    await gaveUp;
    // Back: the channel still wanted is subscribed again, the one given up is not.
    await expect.poll(channels, { timeout: 10_000 }).toContain('kept');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Before: ['kept', 'left'].
    expect(await channels()).toEqual(['kept']);
  });
});
