import { Redis } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { Redis as Valkey } from 'iovalkey';
import { afterEach, describe, expect, it } from 'vitest';
import { driverFor } from '../lib/core/stores/redis/drivers/driver-for.js';
import type { RedisClient } from '../lib/core/stores/redis/drivers/redis-client.js';
import type { ReleaseSubscriber } from '../lib/core/stores/redis/drivers/redis-driver.js';
import { sleep } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

const CLIENTS = {
  'ioredis 5': (url: string) => new Redis(url),
  'ioredis 6': (url: string) => new Redis6(url),
  iovalkey: (url: string) => new Valkey(url),
};

/**
 * The release subscriber's connection of a client with ioredis' API, asked to subscribe while
 * that connection's handshake is still unanswered (the first waiters of a process subscribe
 * right after it is opened, and a busy server answers the handshake late). ioredis sends
 * SUBSCRIBE at once in that state, which puts the connection in subscriber mode; its ready
 * check (INFO) was then refused, the connection closed and opened again, and the channels whose
 * confirmation had not come yet were not subscribed again, though their SUBSCRIBE had resolved:
 * their waiters heard no release and waited for their next poll.
 */
describe.each(Object.keys(CLIENTS) as (keyof typeof CLIENTS)[])('the release subscriber of an %s client', (name) => {
  const admin = useRedis();
  const opened: { client: { disconnect(): void }; subscriber?: ReleaseSubscriber }[] = [];
  afterEach(() => {
    for (const { client, subscriber } of opened.splice(0)) {
      subscriber?.close();
      client.disconnect();
    }
  });

  it('subscribes every channel asked for while its connection is still being set up', async () => {
    const client = CLIENTS[name](redisUrl());
    client.on('error', () => undefined);
    await client.ping();
    const entry: (typeof opened)[number] = { client };
    opened.push(entry);
    const channels = Array.from({ length: 20 }, (_, i) => `handshake-${name.replace(' ', '')}-${i}:released`);
    // The server runs no command for 300 ms: the new connection is accepted, its handshake waits.
    await admin.call('CLIENT', 'PAUSE', '300', 'ALL');
    entry.subscriber = driverFor(client as unknown as RedisClient).subscriber(() => undefined);
    await sleep(50); // connected, handshake unanswered
    await Promise.all(channels.map((channel) => entry.subscriber!.subscribe(channel, false)));
    const subscribed = async () => {
      const counts = (await admin.pubsub('NUMSUB', ...channels)) as (string | number)[];
      return channels.filter((_, i) => Number(counts[2 * i + 1]) > 0);
    };
    // Every SUBSCRIBE resolved: each channel is subscribed on the server (now, and for good).
    await expect.poll(subscribed, { timeout: 5_000 }).toEqual(channels);
    await sleep(500);
    expect(await subscribed()).toEqual(channels);
  });

  // Off a Cluster the channels are subscribed again by the driver itself after a reconnection
  // (ioredis' own resubscription is a promise nobody handles, see close-settles-calls.spec.ts).
  it('subscribes its channels again after its connection was dropped, and not those it left', async () => {
    const client = CLIENTS[name](redisUrl());
    client.on('error', () => undefined);
    await client.ping();
    const messages: string[] = [];
    const entry: (typeof opened)[number] = { client, subscriber: driverFor(client as unknown as RedisClient).subscriber((channel, message) => messages.push(`${channel} ${message}`)) };
    opened.push(entry);
    const prefix = `again-${name.replace(' ', '')}`;
    const channels = [`${prefix}-0:released`, `${prefix}-1:released`, `${prefix}-left:released`];
    for (const channel of channels) await entry.subscriber!.subscribe(channel, false);
    await entry.subscriber!.unsubscribe(channels[2]!, false);
    const counts = async () => ((await admin.pubsub('NUMSUB', ...channels)) as (string | number)[]).filter((_, i) => i % 2 === 1).map(Number);
    await expect.poll(counts, { timeout: 5_000 }).toEqual([1, 1, 0]);
    expect(Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBeGreaterThan(0);
    await expect.poll(counts, { timeout: 5_000 }).toEqual([1, 1, 0]);
    await admin.publish(channels[1]!, 'after');
    await expect.poll(() => messages, { timeout: 5_000 }).toEqual([`${channels[1]} after`]);
  });
});
