import { Redis } from 'ioredis';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review (drivers), of b372a25 and its ioredis follow-up. A node-redis client handed in
 * whose `socket.reconnectStrategy` gives up (`false`, or a function returning `false` or an Error)
 * ends when its connection drops: node-redis closes it for good (`isOpen` false), nobody having
 * called close(). The module took it for one its owner closed: every lock call failed saying "its
 * owner called quit() or disconnect(), or an ioredis retryStrategy gave up reconnecting; close a
 * client you hand in only after the lock module shut down (in onApplicationShutdown)", and
 * app.close() warned "was closed before the lock module shut down ... Close a client you hand in in
 * onApplicationShutdown ..., not in onModuleDestroy": a cure for a mistake nobody made, naming
 * neither node-redis' option nor what happened. As for ioredis' retryStrategy, both now say that
 * the client gave up reconnecting, naming its reconnectStrategy.
 */
const CLIENTS: Record<string, (url: string) => { on(event: 'error', listener: () => void): unknown; connect(): Promise<unknown>; readonly isOpen: boolean; close(): Promise<unknown> }> = {
  'node-redis 6': (url) => createClient6({ url, socket: { reconnectStrategy: false } }) as never,
  'node-redis 5': (url) => createClient5({ url, socket: { reconnectStrategy: false } }) as never,
};

describe.each(Object.keys(CLIENTS))('a %s client handed in whose reconnectStrategy gave up', (name) => {
  let server: RedisServer | undefined;
  let app: LockApp | undefined;
  let admin: Redis | undefined;
  afterEach(async () => {
    await app?.close();
    admin?.disconnect();
    await server?.stop();
    app = admin = server = undefined;
  });

  it('is said to have given up reconnecting, by the calls made on it and at app.close()', { timeout: 20_000 }, async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    const client = CLIENTS[name]!(server.url);
    client.on('error', () => undefined);
    await client.connect();
    const closing = (app = await createLockApp({ redis: client as never, shutdownTimeout: 600 }));
    const held = await closing.locks.acquire('gave-up', { ttl: 30_000 });
    // The connection drops (an idle timeout, a proxy, a restart): node-redis gives the client up.
    await admin.call('CLIENT', 'KILL', 'SKIPME', 'yes', 'TYPE', 'normal');
    await expect.poll(() => client.isOpen).toBe(false);
    const refused = await closing.locks.tryAcquire('gave-up:other').then(
      () => 'answered',
      (error: Error) => error.message,
    );
    // Failed: "... (its owner called quit() or disconnect(), or an ioredis retryStrategy gave up reconnecting); close a client you hand in only after ..."
    expect(refused).toMatch(/reconnectStrategy/);
    app = undefined;
    await closing.close();
    const warnings = closing.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    const warning = warnings.find((message) => message.includes('The Redis client handed in (redis)'));
    // Failed: "... was closed before the lock module shut down ... not in onModuleDestroy."
    expect(warning, warnings.join('\n')).toMatch(/gave up reconnecting.*reconnectStrategy/);
    expect(warning).not.toMatch(/onModuleDestroy/);
    expect(held.held).toBe(false);
  });
});
