/**
 * Defect: `RedisLockHealthIndicator.isHealthy()` answered `up` while the application closed and
 * once it had: it only PINGs Redis, which still answers. But from `app.close()` on `LockService`
 * takes no lock (every call rejects with `LockServiceClosedError`), and Nest closes the HTTP
 * server last, after every shutdown hook: for as long as the close waits for running calls
 * (up to `shutdownTimeout`), a readiness probe on the health route read the locks as up and
 * kept sending traffic that needs them.
 *
 * Now the check is `down` from the moment `LockService` shuts down, without a PING.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, LockServiceClosedError } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { terminusLockModule } from '../support/terminus-app.js';

describe('the health indicator while LockService shuts down', () => {
  useRedis();
  const clients: Redis[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.quit()));
  });

  it('reports down during app.close() and after it, while Redis still answers', async () => {
    // A client the application hands in, and closes itself: it still answers PING after close().
    const client = new Redis(redisUrl());
    clients.push(client);
    const moduleRef = await terminusLockModule(client, { shutdownTimeout: 30_000 });
    const locks = moduleRef.get(LockService);
    const health = moduleRef.get(RedisLockHealthIndicator);
    expect((await health.isHealthy())['redis-lock'].status).toBe('up');

    // A call still running under its lock holds the close up until it ends.
    let finish!: () => void;
    let told!: () => void;
    const stopTold = new Promise<void>((resolve) => (told = resolve));
    const running = locks.using('report', (lock) => new Promise<void>((resolve) => {
      finish = resolve;
      lock.signal.addEventListener('abort', () => told());
    }));
    await expect.poll(() => finish).toBeDefined();
    const closing = moduleRef.close();
    await stopTold;
    await expect(locks.acquire('other')).rejects.toBeInstanceOf(LockServiceClosedError);

    const during = (await health.isHealthy())['redis-lock'];
    expect(during.status).toBe('down');
    expect(during.error).toMatch(/shut/);

    finish();
    await running;
    await closing;
    expect((await health.isHealthy())['redis-lock'].status).toBe('down');
  });
});
