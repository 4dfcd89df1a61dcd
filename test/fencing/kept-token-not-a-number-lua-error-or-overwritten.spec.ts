import { GlideClient } from '@valkey/valkey-glide';
import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError, RedisLockError } from '../../lib/index.js';
import { FENCED_STORE } from '../../lib/fencing/memory-fenced-store.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (fencing), follow-up: a key's token hash field holding something that is not a token
 * (written by something else: a script, a migration, a hand-made HSET) failed every fenced write
 * and read for update of the key on Redis with Lua's own "attempt to compare number with nil"
 * (lib/fencing/fenced-lua.ts, `tonumber(seen) > tonumber(ARGV[2])`), naming neither the key nor
 * the field; in memory `Number(seen)` is NaN, never higher, so the write was accepted and the
 * field overwritten: a unit test passed what production refused. Both now refuse it alike, with a
 * RedisLockError naming the key and the hash, quoted and cut, and not the value found there (it
 * may be anything, an owner token too). `fence()` refuses it too instead of answering NaN.
 */
describe("a fenced call on a key whose kept token is not a whole number (written by something else)", () => {
  const redis = useRedis();

  /** FencedRedis on the store, `key` written at token 3, then its token field overwritten with `bad`. */
  const STORES: Record<string, (key: string, bad: string) => Promise<{ fenced: FencedRedis; stored: () => Promise<string | null> }>> = {
    Redis: async (key, bad) => {
      const fenced = new FencedRedis(redis);
      await fenced.set(key, 'before', 3);
      await redis.hset('{7}:fence', key, bad);
      return { fenced, stored: () => redis.get(key) };
    },
    memory: async (key, bad) => {
      const locks = new InMemoryLocks();
      const fenced = new FencedRedis(locks);
      await fenced.set(key, 'before', 3);
      // Nothing outside writes the memory's token hash; this stands in for what writes Redis'.
      (locks[FENCED_STORE]() as unknown as { fences: Map<string, Map<string, string>> }).fences.get('{7}:fence')!.set(key, bad);
      return { fenced, stored: () => fenced.get(key) };
    },
  };

  const CALLS = [
    ['set', (fenced: FencedRedis, key: string) => fenced.set(key, 'after', 5)],
    ['get', (fenced: FencedRedis, key: string) => fenced.get(key, 5)],
    ['fence', (fenced: FencedRedis, key: string) => fenced.fence(key)],
  ] as const;

  describe.each(Object.keys(STORES))('on %s', (store) => {
    it.each(CALLS.flatMap(([method, call]) => [
      [method, 'owner-3f9c2a', call],
      [method, '', call],
    ]))('%s (kept %j): rejects with a RedisLockError naming the key and its token hash, nothing written', async (method, bad, call) => {
      const { fenced, stored } = await STORES[store]!('deposit:{7}', bad);
      const outcome = await call(fenced, 'deposit:{7}').then(
        (answer) => ({ answer }),
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(RedisLockError);
      expect(outcome).not.toBeInstanceOf(FencedWriteRefusedError);
      const message = (outcome as Error).message;
      expect(message).toMatch(new RegExp(`^FencedRedis\\.${method}\\(\\): the fencing token kept for "deposit:\\{7\\}" \\(field "deposit:\\{7\\}" of the hash "\\{7\\}:fence"\\) is not a whole number`));
      if (bad !== '') expect(message).not.toContain(bad);
      expect(await stored()).toBe('before');
      expect(await redis.hget('{7}:fence', 'deposit:{7}')).toBe(store === 'Redis' ? bad : null);
    });

    it('hset: rejects alike, and names a long key with control characters quoted, escaped and cut', async () => {
      const key = `${'\u202e\n'.repeat(400)}:{7}`;
      const { fenced } = await STORES[store]!(key, 'owner-3f9c2a');
      const outcome = await fenced.hset(key, 'balance', '1', 5).then(
        () => 'written',
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(RedisLockError);
      const message = (outcome as Error).message;
      expect(message).toMatch(/^FencedRedis\.hset\(\): the fencing token kept for "/);
      expect(message).toContain('"{7}:fence"');
      expect(message).not.toMatch(/[\u202e\n]/);
      expect(message.length).toBeLessThan(2000);
      expect(message).not.toContain('owner-3f9c2a');
    });
  });

  // Each client words a script's error reply its own way (GLIDE adds words before it).
  it.each([
    ['node-redis', async () => {
      const client = await nodeRedisClient(redisUrl());
      return { client, close: () => client.close() };
    }],
    ['Valkey GLIDE', async () => {
      const url = new URL(redisUrl());
      const client = await GlideClient.createClient({ addresses: [{ host: url.hostname, port: Number(url.port) }], databaseId: Number(url.pathname.slice(1)) });
      return { client, close: async () => client.close() };
    }],
  ] as const)('through %s: the same RedisLockError', async (_name, open) => {
    await new FencedRedis(redis).set('deposit:{7}', 'before', 3);
    await redis.hset('{7}:fence', 'deposit:{7}', 'owner-3f9c2a');
    const { client, close } = await open();
    try {
      const outcome = await new FencedRedis(client as unknown as ConstructorParameters<typeof FencedRedis>[0]).set('deposit:{7}', 'after', 5).then(
        () => 'written',
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(RedisLockError);
      expect((outcome as Error).message).toMatch(/^FencedRedis\.set\(\): the fencing token kept for "deposit:\{7\}"/);
      expect(await redis.get('deposit:{7}')).toBe('before');
    } finally {
      await close();
    }
  });
});
