import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * Found by review of 2c6a54c. A release Redis refused (an ACL user without HDEL, which gives back
 * a semaphore holder alone, or without EVALSHA) failed with "The release of lock "k" was not
 * answered (NOPERM ...)": Redis did answer, with a refusal that asking again cannot change. The
 * error now says it was refused, why, what to fix, and that the lease ends on its own in Redis;
 * the driver's error stays its cause.
 */
describe('a release Redis refuses', () => {
  const own = useOwnServer();
  const admin = (): Redis => own.admin();

  for (const [label, rule, options] of [
    ['a semaphore holder alone, HDEL refused', '-hdel', { limit: 3 }],
    ['a mutex, EVALSHA refused', '-evalsha', {}],
  ] as const) {
    it(`says it was refused, why, and that its lease ends on its own (${label})`, { timeout: 20_000 }, async () => {
      const key = `refused-release:${rule}`;
      await admin().call('ACL', 'SETUSER', 'releaser', 'on', '>pw', '~*', '&*', '+@all');
      const url = new URL(own.url());
      url.username = 'releaser';
      url.password = 'pw';
      const app = await createLockApp({ redis: url.toString() });
      try {
        const lock = await app.locks.acquire(key, { ttl: 30_000, ...options });
        await admin().call('ACL', 'SETUSER', 'releaser', rule);
        const error = await lock.release().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(RedisLockError);
        const message = (error as Error).message;
        expect(message).not.toMatch(/not answered/);
        expect(message).toMatch(/^The release of lock "refused-release:[^"]+": Redis refused it \(NOPERM/);
        expect(message).toMatch(/its lease ends on its own in Redis\.$/);
        expect(((error as Error).cause as Error).message).toMatch(/NOPERM/);
      } finally {
        await admin().call('ACL', 'SETUSER', 'releaser', '+@all');
        await app.close();
        await admin().call('ACL', 'DELUSER', 'releaser');
        await admin().flushall();
      }
    });
  }
});
