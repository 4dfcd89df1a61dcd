import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review (drivers). A closed node-redis client is refused at startup with an
 * `InvalidLockOptionsError` naming `redis` (redis-connection.ts), and so is a closed GLIDE client
 * ("every lock call would fail with its ClosingError"). An ioredis or iovalkey client the
 * application already closed (`quit()`/`disconnect()`: status `end`, never reconnected by ioredis)
 * is accepted: the application starts, and every lock call then fails, `acquire()` with
 * `LockNotAcquiredError: ... Redis did not answer (Connection is closed.). Raise waitTimeout to
 * wait longer` (which no wait can help), `tryAcquire()` with a bare `Error: Connection is closed.`
 */
const CLIENTS: Record<string, () => { disconnect(): void; ping(): Promise<unknown>; readonly status: string; on(event: string, listener: () => void): unknown; once(event: string, listener: () => void): unknown }> = {
  ioredis: () => new Redis(redisUrl()),
  iovalkey: () => new Valkey(redisUrl()),
};

describe.each(Object.keys(CLIENTS))('a closed %s client handed in', (name) => {
  it('is refused at startup with InvalidLockOptionsError naming `redis`', async () => {
    const client = CLIENTS[name]!();
    client.on('error', () => undefined);
    await client.ping();
    const ended = new Promise<void>((resolve) => client.once('end', resolve));
    client.disconnect();
    await ended;
    expect(client.status).toBe('end');
    const started = await createLockApp({ redis: client as never }).then(
      async (app) => {
        const attempt = await app.locks.acquire('closed-client', { waitTimeout: 200 }).then(() => 'acquired', (error: Error) => error.message);
        await app.close();
        return `started; acquire: ${attempt}`;
      },
      (error: unknown) => error,
    );
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
    expect((started as Error).message).toMatch(/redis/);
  });
});
