import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createLockApp } from '../support/lock-app.js';

/**
 * Found by review: an ioredis client created with `autoResendUnfulfilledCommands: false` drops
 * the commands a closed connection left unanswered without ever settling them
 * (ioredis/built/redis/event_handler.js: `prevCommandQueue = null`). Acquires and renewals are
 * bounded by the library, a release is not: with its reply lost to a reset, `release()` (and a
 * `using()` or `await using` block around it) never ended. Such a client is refused at startup,
 * naming the option, as one with `stringNumbers: true` is; a duplicate with the default works.
 */
describe('a handed-in ioredis client with autoResendUnfulfilledCommands: false', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is refused at startup, naming the option, and a duplicate with the default is accepted', async () => {
    const client = new Redis(server.url, { autoResendUnfulfilledCommands: false });
    try {
      const refused = await createLockApp({ redis: client }).then(
        async (app) => {
          await app.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(InvalidLockOptionsError);
      expect((refused as InvalidLockOptionsError).option).toBe('redis');
      expect((refused as Error).message).toContain('autoResendUnfulfilledCommands');
      const duplicate = client.duplicate({ autoResendUnfulfilledCommands: true });
      try {
        const app = await createLockApp({ redis: duplicate });
        await (await app.locks.acquire('autoresend-on')).release();
        await app.close();
      } finally {
        duplicate.disconnect();
      }
    } finally {
      client.disconnect();
    }
  });
});
