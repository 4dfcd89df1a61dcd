import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createLockApp } from '../support/lock-app.js';
import { ReplyEater } from './support/reply-eater.js';

/**
 * docs/deployment.md, Clients: with ioredis' default `autoResendUnfulfilledCommands`, "a release
 * whose first run had already released (or handed over) the lock is then answered 'not the
 * owner', which is reported as an unconfirmed release [...] never as a lost lock; on a Cluster
 * too". Quorum mode does not get that treatment: `QuorumStore` has no `connectionResets()`, so
 * `HeldLock.releaseInRedis` cannot tell a resent release from a refused one. When the replies of
 * two of three masters are lost with their connections (a client-side network blip cuts them
 * all), ioredis sends the release there again after reconnecting; it finds the key already
 * deleted by its first run and answers 0. Two "not ours" of three make `QuorumStore.release`
 * answer `{ released: false }`, and the holder of a lock it released is told it LOST it: a
 * `lost` event, an error log, its signal aborted (reason `refused`).
 *
 * (If the resent releases answer after the quorum round's 200 ms, the release is reported
 * unconfirmed instead, which is right: a loaded machine can make this test pass, never fail.)
 */
describe('quorum: a release whose replies from two of three masters are lost with their connections', () => {
  const servers: RedisServer[] = [];
  const proxies: ReplyEater[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) servers.push(await startRedisServer());
    for (const server of servers.slice(1)) proxies.push(await ReplyEater.start(server.port));
  });
  afterAll(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await Promise.all(servers.map((server) => server.stop()));
  });

  const CLIENTS = { ioredis: Redis, iovalkey: Valkey } as const;
  const ONLY = (process.env.CLIENTS?.split(',') ?? ['ioredis', 'iovalkey']) as (keyof typeof CLIENTS)[];

  it.each(ONLY)('%s: is never reported as a lost lock', { timeout: 30_000 }, async (name) => {
    // Node 0 direct, nodes 1 and 2 through reply-eating proxies; ioredis reconnects quickly.
    const urls = [servers[0]!.url, ...proxies.map((proxy) => proxy.url)];
    const clients = urls.map((url) => {
      const client = new CLIENTS[name](url, { retryStrategy: () => 10 });
      client.on('error', () => undefined);
      return client;
    });
    const app = await createLockApp({ redis: clients as never, ttl: 30_000 });
    try {
      await (await app.locks.acquire('warm-up')).release(); // scripts cached on every node
      const events: string[] = [];
      const sub = app.locks.events$.subscribe((event) => events.push(event.type));
      const key = `quorum-mid-release-${name}`;
      const lock = await app.locks.acquire(key);
      const eatenBefore = proxies.map((proxy) => proxy.eaten);
      for (const proxy of proxies) proxy.armed = true;
      const outcome = await lock.release().then(
        () => 'resolved',
        (error: Error) => `rejected: ${error.message}`,
      );
      expect(proxies.map((proxy, i) => proxy.eaten - eatenBefore[i]!)).toEqual([1, 1]);
      // The release ran on every node (the resend found nothing left to delete).
      const left = await Promise.all(
        servers.map(async (server) => {
          const admin = new Redis(server.url);
          try {
            return await admin.exists(`lock:{${key}}`);
          } finally {
            admin.disconnect();
          }
        }),
      );
      expect(left).toEqual([0, 0, 0]);
      sub.unsubscribe();
      console.log('release():', outcome);
      // Fails: ['acquired', 'lost'], the signal aborted (refused), "lock lost" logged as an error.
      expect({ events, aborted: lock.signal.aborted, reason: (lock.signal.reason as { reason?: string } | undefined)?.reason, errors: app.logs.lines.filter((line) => line.level === 'error').map((line) => line.message) }).toEqual({
        events: ['acquired', 'released'],
        aborted: false,
        reason: undefined,
        errors: [],
      });
    } finally {
      await app.close();
      clients.forEach((client) => client.disconnect());
    }
  });
});
