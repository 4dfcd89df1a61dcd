import { GlideClient } from '@valkey/valkey-glide';
import { describe, expect, it } from 'vitest';
import { FencedRedis, RedisLockError } from '../../lib/index.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Review (fencing): Valkey GLIDE refuses a command, unsent, while `inflightRequestsLimit` commands
 * are in flight on its client (`Reached maximum inflight requests`); the driver lets it wait for a
 * place and fails it after 2 s still unsent. A fenced write so failed was told as one whose reply
 * never came: "the write to ... may have been applied: Redis did not answer it (...)", with the
 * refusal's own words, or the driver's "the command was not sent", inside that very sentence.
 */
describe('a fenced write that GLIDE refused at its inflightRequestsLimit', () => {
  const own = useOwnRedis();

  it('rejects with a RedisLockError saying it was not sent; the write in flight lands', { timeout: 30_000 }, async () => {
    const { port } = new URL(own.url());
    const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: Number(port) }], inflightRequestsLimit: 1, requestTimeout: 10_000 });
    const fenced = new FencedRedis(client);
    try {
      await fenced.set('deposit:{7}', '100', 41); // the script is cached: the next call is one EVALSHA
      // Writes are held (scripts included) while the first holds GLIDE's one place.
      await own.redis().call('CLIENT', 'PAUSE', '5000', 'WRITE');
      const first = fenced.set('deposit:{7}', '110', 42);
      const second = await fenced.set('deposit:{8}', '5', 42).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await own.redis().call('CLIENT', 'UNPAUSE');
      await first;
      expect(await fenced.fence('deposit:{8}')).toBeNull();
      expect(second).toBeInstanceOf(RedisLockError);
      const message = (second as Error).message;
      expect(message).toMatch(/^FencedRedis\.set\(\): the write of "deposit:\{8\}" was not sent/);
      expect(message).not.toContain('may have been applied');
      expect(await fenced.get('deposit:{7}')).toBe('110');
    } finally {
      await own.redis().call('CLIENT', 'UNPAUSE');
      client.close();
    }
  });
});
