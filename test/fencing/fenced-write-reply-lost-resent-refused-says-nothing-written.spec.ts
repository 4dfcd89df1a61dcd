import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError, RedisLockError } from '../../lib/index.js';
import { useReplyEater } from '../topologies/support/reply-eater.js';

/**
 * Found by review (thirty-third session, fencing): ioredis sends again the commands a closed
 * connection left unanswered (`autoResendUnfulfilledCommands`, on by default; the lock module
 * refuses a client without it). A fenced write whose reply was lost with its connection ran in
 * Redis, and ran again once the client reconnected. When a newer holder claimed the key between
 * the two (its lease ran out while the connection was down, as a connection that drops tends to
 * make it), the second run was refused, and the writer was told `FencedWriteRefusedError`:
 * "nothing was written", while its value was in Redis and the newer holder had read it. A caller
 * that believes it (a deposit reported failed, made again) applies it twice. Such a refusal is
 * now reported as what it is, a write whose outcome is unknown: a `RedisLockError`, not a
 * `FencedWriteRefusedError`.
 */
describe('a fenced write whose reply is lost with its connection (ioredis resends it)', () => {
  const eater = useReplyEater();

  it.each(['set', 'hset'] as const)('%s: a resend refused after a newer holder claimed is not reported as nothing written', { timeout: 30_000 }, async (method) => {
    await eater.admin.flushdb();
    const client = new Redis(eater.proxy.url);
    const stale = new FencedRedis(client);
    const newer = new FencedRedis(eater.admin);
    try {
      const key = `deposit:{${method}}`;
      const write = method === 'set' ? (token: number) => stale.set(key, '110', token) : (token: number) => stale.hset(key, 'balance', 110, token);
      await write(41); // the scripts are cached: the reply eaten is the write's, not a NOSCRIPT
      let open!: () => void;
      eater.proxy.gate = new Promise((resolve) => (open = resolve));
      eater.proxy.armed = true;
      const outcome = write(41).then(
        () => 'written',
        (error: unknown) => error,
      );
      while (eater.proxy.eaten === 0) await new Promise((resolve) => setImmediate(resolve));
      // The write ran in Redis; its writer has not heard so. A newer holder claims the key meanwhile.
      const read = method === 'set' ? await newer.get(key, 42) : await newer.hget(key, 'balance', 42);
      expect(read).toBe('110');
      eater.proxy.gate = undefined;
      open();
      const result = await outcome;
      expect(result).not.toBeInstanceOf(FencedWriteRefusedError);
      expect(result).toBeInstanceOf(RedisLockError);
      expect((result as Error).message).toContain(`FencedRedis.${method}()`);
      expect(await newer.fence(key)).toBe(42);
    } finally {
      eater.proxy.gate = undefined;
      client.disconnect();
    }
  });
});
