import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError, RedisLockError } from '../../lib/index.js';
import { NODE_REDIS, nodeRedisClient } from '../support/node-redis.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (fencing): a fenced write or read for update through a client that was closed before the
 * call (its owner's quit() or close(), or a node-redis client never connected: the common slip of
 * a missing `await client.connect()`) is never sent: the client rejects it at once. FencedRedis
 * said of it what it says of a write whose reply was lost, "the write to ... may have been
 * applied: Redis did not answer it (The client is closed). Read its token with fence() before
 * writing again", sending its caller to reconcile a write that cannot have landed, through the
 * same closed client.
 *
 * Promise: docs/fencing.md: a write "whose reply never came" rejects as one that "may have been
 * applied"; a write refused by the client before it left is no such write.
 */
describe('a fenced write or read for update through a client closed before the call', () => {
  const admin = useRedis();
  const port = Number(new URL(redisUrl()).port);
  const CLIENTS: Record<string, () => Promise<unknown>> = {
    'ioredis, after quit()': async () => {
      const client = new Redis(redisUrl());
      await client.quit();
      return client;
    },
    'node-redis, after close()': async () => {
      const client = await nodeRedisClient(redisUrl());
      await client.close();
      return client;
    },
    'node-redis, never connected': async () => {
      const client = NODE_REDIS[6].createClient({ url: redisUrl() });
      client.on('error', () => undefined);
      return client;
    },
    'Valkey GLIDE, after close()': async () => {
      const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port }] });
      client.close();
      return client;
    },
  };

  describe.each(Object.keys(CLIENTS))('%s', (name) => {
    it.each([
      ['set', 'the write', (fenced: FencedRedis) => fenced.set('deposit:{7}', '110', 42)],
      ['hset', 'the write', (fenced: FencedRedis) => fenced.hset('deposit:{7}', 'balance', '110', 42)],
      ['get', 'the read for update', (fenced: FencedRedis) => fenced.get('deposit:{7}', 42)],
    ] as const)('%s: rejects with a RedisLockError saying it was not sent, not that it may have been applied', async (method, what, call) => {
      const fenced = new FencedRedis((await CLIENTS[name]!()) as ConstructorParameters<typeof FencedRedis>[0]);
      const outcome = await call(fenced).then(
        () => 'answered',
        (error: unknown) => error,
      );
      expect(await new FencedRedis(admin).fence('deposit:{7}')).toBeNull();
      expect(outcome).not.toBeInstanceOf(FencedWriteRefusedError);
      expect(outcome).toBeInstanceOf(RedisLockError);
      const message = (outcome as Error).message;
      expect(message).toMatch(new RegExp(`^FencedRedis\\.${method}\\(\\): ${what} of "deposit:\\{7\\}" was not sent`));
      expect(message).not.toContain('may have been applied');
      expect(message).toContain('client is closed');
      expect((outcome as Error).cause).toBeInstanceOf(Error);
    });
  });
});
