import { once } from 'node:events';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useAclUser } from '../support/acl-user.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Why WRONGPASS (and NOAUTH) are not refusals that end a call at once, as d2f5e3e made NOPERM and
 * an unknown command: a password rotated under the running application is cured without a
 * restart, by the client reconnecting with the password its provider gives it now (here ioredis'
 * `options.password` set anew; node-redis' credentialsProvider, GLIDE's updateConnectionPassword).
 * An acquire() made while its client is refused WRONGPASS waits for that within its waitTimeout,
 * and takes the lock. Shown by the client's own WRONGPASS error before the cure, not by time.
 */
describe('an acquire() while the password is rotated', () => {
  const own = useOwnRedis();
  const user = useAclUser(own, 'rotated');

  it('waits for the client to reconnect with the new password, and takes the lock', { timeout: 30_000 }, async () => {
    const client = new Redis(user.url());
    const refused: string[] = [];
    client.on('error', (error: Error) => refused.push(error.message));
    const app = await createLockApp({ redis: client, shutdownTimeout: 1_000 });
    try {
      await (await app.locks.acquire('rotated-warm')).release();
      // The password rotated on the server, and the client's connection dropped (a restart, a
      // proxy's idle timeout): it reconnects with the old one.
      await user.rules('resetpass', '>rotated');
      const wrongPass = once(client, 'error');
      await own.redis().call('CLIENT', 'KILL', 'USER', new URL(user.url()).username);
      const taking = app.locks.acquire('rotated', { waitTimeout: 20_000 });
      await wrongPass;
      expect(refused.join('\n')).toMatch(/WRONGPASS/);
      // The provider hands the client the new password.
      client.options.password = 'rotated';
      const lock = await taking;
      expect(await own.redis().exists('lock:{rotated}')).toBe(1);
      await lock.release();
    } finally {
      await app.close();
      client.disconnect();
    }
  });
});
