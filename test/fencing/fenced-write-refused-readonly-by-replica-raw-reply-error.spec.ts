import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedRedis, RedisUnavailableError } from '../../lib/index.js';
import { openClient } from '../support/handed-clients.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { useReplicatedServer } from '../support/replicated-server.js';

/**
 * docs/fencing.md, "Redis: FencedRedis", and the errors table of docs/locks.md: a refusal of
 * Redis that passes (a failover's READONLY, LOADING, MASTERDOWN, TRYAGAIN, CLUSTERDOWN, BUSY) is a
 * `RedisUnavailableError`, which a route answers 503 with `Retry-After`, as the lock calls' is.
 *
 * Found by a defect hunt (session 49): a fenced write or read for update through a client whose
 * server a failover demoted to a replica (a connection that still points at the old master)
 * failed with the client's bare `READONLY You can't write against a read only replica.` reply, no
 * `RedisLockError` at all: a 500 logged per request, and a filter's `instanceof` could not tell it
 * from the application's own errors, while the lock calls of the same route were 503s. The script
 * ran to its first write, which the replica refused: nothing was written or claimed.
 */
describe('FencedRedis through a client whose server is a replica (READONLY)', () => {
  const servers = useReplicatedServer();
  // Valkey GLIDE refuses to connect to a replica alone ("No primary node found"): not here.
  const opens = {
    ioredis: async () => {
      const client = new Redis(servers.replica.url);
      return { client, close: async () => client.disconnect() };
    },
    'ioredis 6': async () => {
      const handed = await openClient('ioredis 6', servers.replica.url);
      return { client: handed.client, close: async () => handed.close() };
    },
    iovalkey: async () => {
      const handed = await openClient('iovalkey', servers.replica.url);
      return { client: handed.client, close: async () => handed.close() };
    },
    'node-redis': async () => {
      const client = await nodeRedisClient(servers.replica.url);
      return { client, close: () => client.close() };
    },
  };
  const clients: Record<string, { client: unknown; close(): Promise<unknown> }> = {};
  beforeAll(async () => {
    for (const [name, open] of Object.entries(opens)) clients[name] = await open();
  });
  afterAll(async () => {
    await Promise.all(Object.values(clients).map((opened) => opened.close()));
  });

  it.each(Object.keys(opens))('%s: each write and read for update rejects with RedisUnavailableError, saying nothing was written or claimed', async (name) => {
    const fenced = new FencedRedis(clients[name]!.client as never);
    const calls = {
      set: () => fenced.set('wallet:{7}', '100', 5),
      hset: () => fenced.hset('account:{7}', { balance: 100 }, 5),
      get: () => fenced.get('wallet:{7}', 5),
      hget: () => fenced.hget('account:{7}', 'balance', 5),
    };
    for (const [method, call] of Object.entries(calls)) {
      const error = await call().then(
        () => new Error('resolved'),
        (refusal: unknown) => refusal as Error,
      );
      // Failed: a ReplyError, "READONLY You can't write against a read only replica. script: ...".
      expect(error, method).toBeInstanceOf(RedisUnavailableError);
      expect(error.message, method).toMatch(new RegExp(`^FencedRedis\\.${method}\\(\\): Redis refused the (write to|read for update of) "(wallet|account):\\{7\\}" for now \\(.*READONLY|ReadOnly.*\\), so nothing was (written|claimed or read)\\.`));
      expect(String((error.cause as Error | undefined)?.message), method).toMatch(/READONLY|ReadOnly/);
    }
    // A plain read is no write: the replica answers it.
    expect(await fenced.get('wallet:{7}')).toBeNull();
  });
});
