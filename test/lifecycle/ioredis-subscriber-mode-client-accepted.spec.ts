import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review (drivers). An ioredis client in subscriber mode (the application subscribed on it, as
 * apps sharing one client for pub/sub do) refuses every command but (P|S)SUBSCRIBE, PING, QUIT.
 * Handed in, it is accepted at startup; every lock call then fails with
 * `LockNotAcquiredError: ... Redis did not answer (Connection in subscriber mode, only subscriber
 * commands may be used). Raise waitTimeout to wait longer`: Redis was never asked, and no wait
 * helps. Like a node-redis client not connected, it should be refused at startup, naming `redis`.
 */
it('an ioredis client in subscriber mode is refused at startup', { timeout: 20_000 }, async () => {
  const client = new Redis(redisUrl());
  client.on('error', () => undefined);
  await client.subscribe('application-channel');
  try {
    const started = await createLockApp({ redis: client }).then(
      async (app) => {
        const attempt = await app.locks.acquire('subscriber-mode', { waitTimeout: 200 }).then(() => 'acquired', (error: Error) => error.message);
        await app.close();
        return `started; acquire: ${attempt}`;
      },
      (error: unknown) => error,
    );
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
  } finally {
    client.disconnect();
  }
});
