import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { handedLockApp, openClient, type HandedClient } from '../support/handed-clients.js';
import type { LockApp } from '../support/lock-app.js';
import { nodeRedisClient, nodeRedisLockApp } from '../support/node-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review (drivers' error classification). A failover demotes the server a client is still
 * connected to: Redis answers its writes READONLY until the client moves to the new master, which
 * passes, and docs/locks.md says such a call fails with a `RedisUnavailableError` (503 with
 * Retry-After over HTTP, no error log). Valkey GLIDE words Redis' error codes its own way, "An error
 * was signalled by the server: - ReadOnly: You can't write against a read only replica." (LOADING,
 * MASTERDOWN, TRYAGAIN and CLUSTERDOWN likewise: BusyLoadingError, MasterDown, TryAgain,
 * ClusterDown), which the classification, written for "READONLY You can't write ...", did not
 * know: on a GLIDE client the call failed with a plain `RedisLockError` (500, logged), where on
 * ioredis, iovalkey and node-redis it is a `RedisUnavailableError`.
 */
const CLIENTS: Record<string, (url: string) => Promise<{ open(): Promise<LockApp> }>> = {
  GLIDE: async (url) => {
    const handed: HandedClient = await openClient('GLIDE', url);
    return { open: () => handedLockApp(handed) };
  },
  iovalkey: async (url) => {
    const handed: HandedClient = await openClient('iovalkey', url);
    return { open: () => handedLockApp(handed) };
  },
  'node-redis 6': async (url) => {
    const client = await nodeRedisClient(url, 6);
    return { open: () => nodeRedisLockApp([client]) };
  },
};

describe.each(Object.keys(CLIENTS))('a %s client on a server a failover demoted', (name) => {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  afterEach(async () => {
    for (const admin of admins.splice(0)) admin.disconnect();
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it('fails a tryAcquire() Redis answered READONLY with a RedisUnavailableError', { timeout: 20_000 }, async () => {
    const master = await startRedisServer();
    servers.push(master);
    const demoted = await startRedisServer();
    servers.push(demoted);
    const app = await (await CLIENTS[name]!(demoted.url)).open();
    try {
      await (await app.locks.acquire('demoted:first')).release();
      const admin = new Redis(demoted.url);
      admins.push(admin);
      const { port } = new URL(master.url);
      await admin.call('REPLICAOF', '127.0.0.1', port);
      await expect.poll(async () => String(await admin.call('ROLE')).split(',')[0]).toBe('slave');
      const refused = await app.locks.tryAcquire('demoted:second').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(RedisLockError);
      expect((refused as Error).message).toMatch(/read only replica/);
      // Failed on GLIDE: a plain RedisLockError ("... (An error was signalled by the server: - ReadOnly: You can't write against a read only replica).").
      expect(refused).toBeInstanceOf(RedisUnavailableError);
    } finally {
      await app.close();
    }
  });
});
