import { createClient as createClient6 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review (drivers). A node-redis client the application subscribed on (as apps sharing
 * one client for pub/sub do) speaking RESP2 (node-redis 5's default, or `RESP: 2` on node-redis 6)
 * is in subscriber mode: Redis answers every command but (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING,
 * QUIT and RESET with "ERR Can't execute 'evalsha': only (P|S)SUBSCRIBE / ... are allowed in this
 * context". Handed in, it was accepted at startup, and every lock call failed: `tryAcquire()` with
 * a plain `RedisLockError` "Redis could not be asked (ERR Can't execute 'evalsha' ...)", naming
 * neither the option nor the cure, `acquire()` only at its waitTimeout. An ioredis or iovalkey
 * client in subscriber mode is refused at startup naming `redis` (8512d654); this one is now too.
 * Under RESP3 (node-redis 6's default) Redis runs any command on a subscribed connection: such a
 * client is accepted, and locks.
 */
type Client = {
  on(event: 'error', listener: () => void): unknown;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: () => void): Promise<unknown>;
  close(): Promise<unknown>;
};
const RESP2_CLIENTS: Record<string, (url: string) => Client> = {
  'node-redis 5 (RESP2, its default)': (url) => createClient5({ url }) as unknown as Client,
  'node-redis 6 with RESP: 2': (url) => createClient6({ url, RESP: 2 }) as unknown as Client,
};

async function subscribed(make: (url: string) => Client): Promise<Client> {
  const client = make(redisUrl());
  client.on('error', () => undefined);
  await client.connect();
  await client.subscribe('application-channel', () => undefined);
  return client;
}

describe('a node-redis client the application subscribed on, handed in', () => {
  useRedis();

  it.each(Object.keys(RESP2_CLIENTS))('%s is refused at startup, naming the option', { timeout: 20_000 }, async (name) => {
    const client = await subscribed(RESP2_CLIENTS[name]!);
    try {
      const started = await createLockApp({ redis: client as never }).then(
        async (app) => {
          const attempt = await app.locks.tryAcquire('resp2-subscriber-mode').then(
            (lock) => (lock === null ? 'busy' : 'acquired'),
            (error: Error) => `${error.constructor.name}: ${error.message}`,
          );
          await app.close();
          // Failed: started; tryAcquire: RedisLockError: tryAcquire("resp2-subscriber-mode"): Redis could not be asked (ERR Can't execute 'evalsha': ...).
          return `started; tryAcquire: ${attempt}`;
        },
        (error: unknown) => error,
      );
      expect(started).toBeInstanceOf(InvalidLockOptionsError);
      expect((started as Error).message).toMatch(/^Option "redis" must be a node-redis client not in subscriber mode under RESP2/);
    } finally {
      await client.close();
    }
  });

  it('node-redis 6 under RESP3 (its default) is accepted, and locks', { timeout: 20_000 }, async () => {
    const client = await subscribed((url) => createClient6({ url }) as unknown as Client);
    try {
      const app = await createLockApp({ redis: client as never });
      try {
        const lock = await app.locks.tryAcquire('resp3-subscribed');
        expect(lock).not.toBeNull();
        await lock!.release();
      } finally {
        await app.close();
      }
    } finally {
      await client.close();
    }
  });
});
