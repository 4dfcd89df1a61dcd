import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { Redis as Redis6 } from 'ioredis6';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError, RedisUnansweredError } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { createLockApp } from '../support/lock-app.js';
import { countAttempts } from '../support/mechanism.js';
import { useOwnServer } from '../support/own-server.js';
import { terminusLockModule } from '../support/terminus-app.js';

/**
 * Found by review (drivers). An ioredis (or iovalkey) client handed in that its owner closes
 * (`quit()` or `disconnect()`) while it waits to reconnect (Redis restarted, a connection
 * dropped, a retryStrategy's backoff) never ends: its socket closed already, and the close that
 * would end it never comes (redis/ioredis#1247). It stays in status `reconnecting` for good, and
 * queues every command it is given offline, never to be sent nor refused. A lock call made on it
 * then waited out its whole waitTimeout and failed with LockNotAcquiredError, "Redis did not
 * answer", and tryAcquire() with RedisUnansweredError, though the client had been closed: the
 * same call on a client closed while connected ends at its first attempt, naming the closed
 * client and what to do. The driver now refuses a command of a client its owner closed at once,
 * as ioredis does once such a client ended. Shown by the error, not by time.
 */
describe('an ioredis client handed in, closed by its owner while it waits to reconnect', () => {
  const server = useOwnServer();

  const clients = {
    ioredis: (url: string) => new Redis(url, { retryStrategy: () => 60_000, connectionName: 'closed-while-reconnecting' }),
    'ioredis 6': (url: string) => new Redis6(url, { retryStrategy: () => 60_000, connectionName: 'closed-while-reconnecting' }),
    iovalkey: (url: string) => new Valkey(url, { retryStrategy: () => 60_000, connectionName: 'closed-while-reconnecting' }),
  };
  for (const [label, make] of Object.entries(clients)) {
    for (const how of ['quit', 'disconnect'] as const) {
      it(`ends a lock call at its first attempt, naming the closed client (${label}, ${how}())`, { timeout: 30_000 }, async () => {
        const client = make(server.url());
        client.on('error', () => undefined);
        await client.ping();
        const app = await createLockApp({ redis: client as Redis, shutdownTimeout: 1_000 });
        try {
          await (await app.locks.acquire(`warm:${label}:${how}`)).release();
          // The connection drops; the client waits a minute before it reconnects.
          await server.admin().client('KILL', 'USER', 'default', 'SKIPME', 'yes');
          await expect.poll(() => client.status).toBe('reconnecting');
          if (how === 'quit') await client.quit();
          else client.disconnect();

          const attempts = countAttempts(app.locks);
          const acquired = await app.locks.acquire(`closed:${label}:${how}`, { waitTimeout: 4_000 }).then(
            () => undefined,
            (error: unknown) => error,
          );
          attempts.stop();
          // On main: LockNotAcquiredError ("Redis did not answer") once the 4 s ran out.
          expect(acquired).toBeInstanceOf(RedisLockError);
          expect(acquired).not.toBeInstanceOf(LockNotAcquiredError);
          expect((acquired as Error).message).toMatch(/client was closed/);
          expect(attempts.count).toBe(1);

          // On main: RedisUnansweredError once its 1 s ran out.
          const tried = await app.locks.tryAcquire(`closed-try:${label}:${how}`).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(tried).toBeInstanceOf(RedisLockError);
          expect(tried).not.toBeInstanceOf(RedisUnansweredError);
          expect((tried as Error).message).toMatch(/client was closed/);
        } finally {
          await app.close();
        }
      });
    }
  }

  it('reports the health check down with the client failed, not a PING unanswered (ioredis)', { timeout: 30_000 }, async () => {
    const client = clients.ioredis(server.url());
    client.on('error', () => undefined);
    await client.ping();
    const moduleRef = await terminusLockModule(client, { waitTimeout: 0 });
    try {
      await server.admin().client('KILL', 'USER', 'default', 'SKIPME', 'yes');
      await expect.poll(() => client.status).toBe('reconnecting');
      client.disconnect();
      const { locks } = await moduleRef
        .get(RedisLockHealthIndicator)
        .isHealthy('locks')
        .catch((error: { response?: Record<string, { status: string; nodes: { error?: string }[] }> }) => error.response!);
      expect(locks!.status).toBe('down');
      // On main: "no answer to PING within 1000 ms".
      expect(locks!.nodes[0]!.error).toMatch(/client failed/);
    } finally {
      await moduleRef.close();
    }
  });
});
