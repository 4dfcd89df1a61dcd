import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { sleep } from './support/lock-app.js';
import { nodeRedisClient, nodeRedisLockApp, type NodeRedisVersion } from './support/node-redis.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

type Watch = { close(): void };
type Notifier = { watch(channel: string, token: string, racesFreed: boolean): Watch; channels: Map<string, unknown> };

/**
 * Found by review. node-redis driver: the subscriber connection is opened by the first SUBSCRIBE, which waits for
 * `connect()` before it goes out. A waiter that leaves meanwhile makes the notifier unsubscribe
 * the channel (setImmediate), and the driver's `unsubscribe` runs node-redis' UNSUBSCRIBE for a
 * channel node-redis has no listener on yet: nothing is sent. The SUBSCRIBE then goes out once
 * connected, for a channel no waiter watches: it stayed subscribed on Redis for the life of the
 * application (no linger timer, no cap, nobody unsubscribes it). Now the driver skips it.
 */
describe.each([6, 5] as NodeRedisVersion[])('node-redis %i subscriber, a waiter that leaves before the connection is up', (version) => {
  let server: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  it('leaves no subscription to its channel on Redis', async () => {
    const app = await nodeRedisLockApp([await nodeRedisClient(server.url, version)], { ttl: 30_000 });
    try {
      const key = `review-nr-${version}`;
      await admin.set(`lock:{${key}}`, 'someone-else', 'PX', 30_000);
      const notifier = (app.locks as unknown as { [LOCK_RUNNER]: { notifier: Notifier } })[LOCK_RUNNER].notifier;
      const watch = notifier.watch.bind(notifier);
      const giveUp = new AbortController();
      // The caller goes away the moment its waiter subscribes (a waitTimeout or an abort that
      // comes while the subscriber connection is still being set up).
      notifier.watch = (channel, token, racesFreed) => {
        const watched = watch(channel, token, racesFreed);
        giveUp.abort(new Error('caller went away'));
        return watched;
      };
      await expect((app.locks as LockService).acquire(key, { waitTimeout: 10_000, signal: giveUp.signal })).rejects.toThrow('caller went away');
      // The notifier forgot the channel at once (it never went live: no linger).
      expect(notifier.channels.size).toBe(0);
      // Give the connection and any UNSUBSCRIBE time to settle.
      await sleep(1_500);
      expect(await admin.pubsub('CHANNELS', `*${key}*`)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
