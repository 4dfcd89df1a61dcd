import { lookup as dnsLookup, type LookupOneOptions } from 'node:dns';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRedisDriver } from '../../lib/core/stores/redis/drivers/node-redis-driver.js';
import type { NodeRedisClient } from '../../lib/core/stores/redis/drivers/node-redis-client.js';
import type { Factory } from '../support/node-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review. The release subscriber's connection (a `duplicate()` of the node-redis client
 * handed in) closed while its connect was under way (a slow name lookup, a remote Redis) was
 * destroyed before it had a socket: node-redis then connected it all the same, made its
 * subscriptions, and left it open with nothing to end it, keeping the process alive for good.
 * Now a close during a connect ends the connection once that connect settles.
 */
describe('the node-redis release subscriber, closed while its connection is being opened', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server?.stop());

  /** The connections the server has that are subscribed to something. */
  const subscribers = async (): Promise<string[]> => {
    const admin = createClient6({ url: server.url });
    await admin.connect();
    try {
      const list = String(await admin.sendCommand(['CLIENT', 'LIST']));
      return list.split('\n').filter((line) => /\bsub=[1-9]/.test(line));
    } finally {
      admin.destroy();
    }
  };

  it.each([
    [6, createClient6 as unknown as Factory],
    [5, createClient5 as unknown as Factory],
  ] as const)('ends the connection once it opens, subscribed to nothing (node-redis %i)', async (_version, create) => {
    let slow = false;
    // A name lookup that takes 300 ms once `slow` is set: the subscriber's connect is under way that long.
    const lookup = (_host: string, options: LookupOneOptions, callback: (...args: unknown[]) => void): void => {
      const go = () => dnsLookup('127.0.0.1', options, callback as never);
      if (slow) setTimeout(go, 300);
      else go();
    };
    const client = create({ socket: { host: 'localhost', port: server.port, lookup } as never });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const driver = new NodeRedisDriver(client as unknown as NodeRedisClient, 'client');
      slow = true;
      const subscriber = driver.subscriber(() => undefined);
      const subscribed = subscriber.subscribe('closed-while-connecting', false).then(
        () => 'subscribed',
        () => 'rejected',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      subscriber.close();
      expect(await subscribed).toBe('rejected');
      // Past the lookup and the connect: before, the connection was then up and subscribed.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await subscribers()).toEqual([]);
    } finally {
      await client.close();
    }
  });

  // Found by review of the fix above: left to the connect's end, a connection whose socket was
  // made but whose handshake Redis did not answer (frozen, a partition after the TCP handshake)
  // stayed open for as long as Redis did not answer, which nothing bounds. Once it has a socket,
  // a close ends it at once.
  it.each([
    [6, createClient6 as unknown as Factory],
    [5, createClient5 as unknown as Factory],
  ] as const)('ends at once a connection whose handshake Redis does not answer (node-redis %i)', { timeout: 30_000 }, async (_version, create) => {
    const client = create({ socket: { host: '127.0.0.1', port: server.port, connectTimeout: 1_000 } });
    client.on('error', () => undefined);
    await client.connect();
    const subscriber = new NodeRedisDriver(client as unknown as NodeRedisClient, 'client').subscriber(() => undefined);
    let settled = 'pending';
    server.pause();
    try {
      void subscriber.subscribe('closed-in-handshake', false).then(
        () => (settled = 'subscribed'),
        () => (settled = 'rejected'),
      );
      // The socket is made (the kernel accepts for a frozen Redis); the handshake waits.
      await new Promise((resolve) => setTimeout(resolve, 200));
      subscriber.close();
      // Redis stays frozen: before, the subscribe waited for it (and the socket with it).
      await expect.poll(() => settled, { timeout: 5_000 }).toBe('rejected');
    } finally {
      server.resume();
      await client.close();
    }
  });
});
