import { Redis } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { Redis as Valkey } from 'iovalkey';
import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError, RedisLockError } from '../../lib/index.js';
import { NODE_REDIS } from '../support/node-redis.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (fencing), follow-up of the "not sent" fixes: an ioredis connection in subscriber mode
 * (after `subscribe()`) refuses every other command without sending it ("Connection in subscriber
 * mode, only subscriber commands may be used"), as do iovalkey and ioredis 6 under RESP2. A fenced write or
 * read for update through it was told as one whose reply never came, "may have been applied ...
 * Read its token with fence() before writing again", of a write that cannot have landed.
 *
 * (A client subscribed already when given to `new FencedRedis()` is refused there; this is one
 * that subscribes afterwards.) node-redis refuses nothing itself: it sends the script, which Redis
 * runs under RESP3 (node-redis 6's default) and refuses under RESP2 with an error reply of its
 * own, passed on as it is: neither says anything of a write that may have landed.
 */
describe('a fenced write or read for update through a connection in subscriber mode', () => {
  const admin = useRedis();
  const IOREDIS: Record<string, () => Redis> = {
    ioredis: () => new Redis(redisUrl()),
    // ioredis 6 speaks RESP3 by default, where a subscribed connection runs any command (below).
    'ioredis 6, protocol: 2': () => new Redis6(redisUrl(), { protocol: 2 }) as unknown as Redis,
    iovalkey: () => new Valkey(redisUrl()) as unknown as Redis,
  };

  describe.each(Object.keys(IOREDIS))('%s, after subscribe()', (name) => {
    it.each([
      ['set', 'the write', (fenced: FencedRedis) => fenced.set('deposit:{7}', '110', 42)],
      ['hset', 'the write', (fenced: FencedRedis) => fenced.hset('deposit:{7}', 'balance', '110', 42)],
      ['get', 'the read for update', (fenced: FencedRedis) => fenced.get('deposit:{7}', 42)],
    ] as const)('%s: rejects with a RedisLockError saying it was not sent, not that it may have been applied', async (method, what, call) => {
      const client = IOREDIS[name]!();
      try {
        // Made before: a client already subscribed is refused by new FencedRedis().
        const fenced = new FencedRedis(client);
        await client.subscribe('news');
        const outcome = await call(fenced).then(
          () => 'answered',
          (error: unknown) => error,
        );
        expect(await new FencedRedis(admin).fence('deposit:{7}')).toBeNull();
        expect(outcome).not.toBeInstanceOf(FencedWriteRefusedError);
        expect(outcome).toBeInstanceOf(RedisLockError);
        const message = (outcome as Error).message;
        expect(message).toMatch(new RegExp(`^FencedRedis\\.${method}\\(\\): ${what} of "deposit:\\{7\\}" was not sent: its Redis client is in subscriber mode`));
        expect(message).not.toContain('may have been applied');
        expect(message).not.toContain('fence()');
        expect(((outcome as Error).cause as Error).message).toContain('subscriber mode');
      } finally {
        client.disconnect();
      }
    });
  });

  it('ioredis 6, RESP3 (its default), subscribed: the write is sent and lands', async () => {
    const client = new Redis6(redisUrl());
    try {
      const fenced = new FencedRedis(client as unknown as Redis);
      await client.subscribe('news');
      await fenced.set('deposit:{7}', '110', 42);
      expect(await new FencedRedis(admin).fence('deposit:{7}')).toBe(42);
    } finally {
      client.disconnect();
    }
  });

  // node-redis 6 speaks RESP3 by default, where Redis runs any command on a subscribed connection.
  it.each([
    ['node-redis, RESP3 (its default)', {}],
    ['node-redis, RESP: 2', { RESP: 2 }],
  ] as const)('%s, subscribed: the write is sent, and Redis answers it (no "may have been applied")', async (_name, options) => {
    const client = NODE_REDIS[6].createClient({ url: redisUrl(), ...options });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const fenced = new FencedRedis(client as unknown as ConstructorParameters<typeof FencedRedis>[0]);
      await (client as unknown as { subscribe(channel: string, listener: () => void): Promise<void> }).subscribe('news', () => undefined);
      const outcome = await fenced.set('deposit:{7}', '110', 42).then(
        () => 'written',
        (error: unknown) => error,
      );
      if ('RESP' in options) {
        // Redis' own refusal, passed on as it is: the script did not run.
        expect(outcome).toBeInstanceOf(Error);
        expect(outcome).not.toBeInstanceOf(RedisLockError);
        expect((outcome as Error).message).toMatch(/^ERR Can't execute 'evalsha'/);
        expect(await new FencedRedis(admin).fence('deposit:{7}')).toBeNull();
      } else {
        expect(outcome).toBe('written');
        expect(await new FencedRedis(admin).fence('deposit:{7}')).toBe(42);
      }
    } finally {
      await client.close();
    }
  });
});
