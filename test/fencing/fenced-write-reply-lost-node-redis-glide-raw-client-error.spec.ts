import { GlideClient } from '@valkey/valkey-glide';
import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError, RedisLockError } from '../../lib/index.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { useReplyEater } from '../topologies/support/reply-eater.js';

/**
 * Found by review. A fenced write (or a read for update's claim) whose reply is lost with its
 * connection ran in Redis. ioredis sends it again and its outcome is reported (a refusal across
 * the reset is a `RedisLockError`: it may have been applied). node-redis and Valkey GLIDE send
 * nothing again: they reject the call with their own error (`SocketClosedUnexpectedlyError`,
 * `ConnectionError`), which named neither FencedRedis, the key nor that the write may have
 * landed, and was no `RedisLockError` for a filter to catch. The library's error now says so,
 * the client's error kept as its `cause`.
 */
describe('a fenced write whose reply is lost with its connection, on clients that do not resend', () => {
  const eater = useReplyEater();
  const CLIENTS: Record<string, () => Promise<{ client: unknown; close: () => unknown }>> = {
    'node-redis': async () => {
      const client = await nodeRedisClient(eater.proxy.url);
      return { client, close: () => client.close().catch(() => undefined) };
    },
    'Valkey GLIDE': async () => {
      const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: eater.proxy.port }], requestTimeout: 2_000 });
      return { client, close: () => client.close() };
    },
  };

  describe.each(Object.keys(CLIENTS))('%s', (name) => {
    it.each(['set', 'claim'] as const)('%s: rejects with a RedisLockError saying it may have been applied, the client error as cause', { timeout: 30_000 }, async (call) => {
      await eater.admin.flushdb();
      const { client, close } = await CLIENTS[name]!();
      const fenced = new FencedRedis(client as ConstructorParameters<typeof FencedRedis>[0]);
      try {
        const key = `deposit:{${call}}`;
        // The scripts are cached: the reply eaten is the call's, not a NOSCRIPT.
        await fenced.set(key, '100', 41);
        await fenced.get(key, 41);
        eater.proxy.armed = true;
        const outcome = await (call === 'set' ? fenced.set(key, '110', 42) : fenced.get(key, 42)).then(
          () => 'answered',
          (error: unknown) => error,
        );
        // It ran in Redis: the key has accepted its token.
        expect(await new FencedRedis(eater.admin).fence(key)).toBe(42);
        expect(outcome).not.toBeInstanceOf(FencedWriteRefusedError);
        expect(outcome).toBeInstanceOf(RedisLockError);
        expect((outcome as Error).message).toMatch(new RegExp(`^FencedRedis\\.${call === 'set' ? 'set' : 'get'}\\(\\): .*"${key.replace(/[{}]/g, '\\$&')}".*may have been applied`));
        expect((outcome as Error).cause).toBeInstanceOf(Error);
      } finally {
        eater.proxy.armed = false;
        await close();
      }
    });
  });
});
