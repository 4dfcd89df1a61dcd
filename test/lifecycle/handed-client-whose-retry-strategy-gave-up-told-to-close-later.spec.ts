import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review of b372a25. Its shutdown warning for a client handed in that is closed already
 * told the application to "close it in onApplicationShutdown, not onModuleDestroy" also when
 * nobody closed it: an ioredis client whose own retryStrategy gave up reconnecting (Redis stopped,
 * `retryStrategy: () => null`) ends as one closed by quit() does. The warning now says what
 * happened: the client gave up reconnecting.
 */
describe('a client handed in whose retryStrategy gave up before app.close()', () => {
  let server: RedisServer | undefined;
  let app: LockApp | undefined;
  let client: Redis | undefined;
  afterEach(async () => {
    await app?.close();
    client?.disconnect();
    await server?.stop();
    app = client = server = undefined;
  });

  it('is said to have given up reconnecting, not to be closed in the wrong hook', { timeout: 20_000 }, async () => {
    server = await startRedisServer();
    client = new Redis(server.url, { retryStrategy: () => null });
    client.on('error', () => undefined);
    await client.ping();
    const closing = app = await createLockApp({ redis: client, shutdownTimeout: 600 });
    await closing.locks.acquire('gave-up', { ttl: 30_000 });
    const ended = new Promise((resolve) => client!.once('end', resolve));
    await server.stop();
    await ended;
    app = undefined;
    await closing.close();
    const warnings = closing.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    const warning = warnings.find((message) => message.includes('The Redis client handed in (redis)'));
    expect(warning, warnings.join('\n')).toMatch(/gave up reconnecting/);
    expect(warning).not.toMatch(/onModuleDestroy/);
  });
});
