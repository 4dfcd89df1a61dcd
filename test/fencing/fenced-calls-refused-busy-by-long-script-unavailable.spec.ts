import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedRedis, RedisUnavailableError } from '../../lib/index.js';
import { openClient } from '../support/handed-clients.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * docs/fencing.md, "Redis: FencedRedis": a refusal of Redis that passes is a
 * `RedisUnavailableError` (503 with `Retry-After` over HTTP) saying that nothing was written or
 * claimed, here BUSY on a real server: a script of someone else's runs past the server's
 * `busy-reply-threshold`, and Redis answers every other call BUSY until it ends (SCRIPT KILL). The
 * writes' and reads for update's classification was unit-tested only (ae02b3a3); plain reads and
 * fence() are classified so since the fix of test/fencing/fenced-plain-read-refused-for-good-raw-reply-error.spec.ts.
 * A server of its own: the script holds every caller of the server up.
 */
type Opened = { client: unknown; close(): Promise<unknown> };

describe('FencedRedis calls while a long script holds the server (BUSY)', () => {
  const server = useOwnServer(['--busy-reply-threshold', '50']);
  const opens: Record<string, () => Promise<Opened>> = {
    ioredis: async () => {
      const client = new Redis(server.url());
      client.on('error', () => undefined);
      return { client, close: async () => client.disconnect() };
    },
    'ioredis 6': async () => {
      const handed = await openClient('ioredis 6', server.url());
      return { client: handed.client, close: async () => handed.close() };
    },
    iovalkey: async () => {
      const handed = await openClient('iovalkey', server.url());
      return { client: handed.client, close: async () => handed.close() };
    },
    'node-redis': async () => {
      const client = await nodeRedisClient(server.url());
      return { client, close: () => client.close() };
    },
    GLIDE: async () => {
      const { hostname, port } = new URL(server.url());
      const client = await GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], requestTimeout: 5_000 });
      return { client, close: async () => client.close() };
    },
  };
  const clients: Record<string, Opened> = {};
  beforeAll(async () => {
    for (const [name, open] of Object.entries(opens)) clients[name] = await open();
  });
  afterAll(async () => {
    await Promise.all(Object.values(clients).map((opened) => opened.close()));
  });

  it.each(Object.keys(opens))('%s: each write, read for update, plain read and fence() rejects with RedisUnavailableError, nothing written', async (name) => {
    const fenced = new FencedRedis(clients[name]!.client as never);
    const calls = {
      set: () => fenced.set('wallet:{7}', '100', 5),
      hset: () => fenced.hset('account:{7}', { balance: 100 }, 5),
      'get with a token': () => fenced.get('wallet:{7}', 5),
      'hget with a token': () => fenced.hget('account:{7}', 'balance', 5),
      get: () => fenced.get('wallet:{7}'),
      hget: () => fenced.hget('account:{7}', 'balance'),
      fence: () => fenced.fence('wallet:{7}'),
    };
    const admin = server.admin();
    const busy = new Redis(server.url());
    busy.on('error', () => undefined);
    let looping: Promise<unknown> | undefined;
    try {
      looping = busy.eval('while true do end', 0).catch(() => undefined);
      // Past the threshold, Redis answers BUSY to any call but SCRIPT KILL and a few others.
      await expect.poll(() => admin.get('probe').then(() => 'answered', (error: Error) => error.message), { timeout: 10_000 }).toMatch(/^BUSY/);
      for (const [call, send] of Object.entries(calls)) {
        const error = await send().then(
          () => new Error('resolved'),
          (refusal: unknown) => refusal as Error,
        );
        const method = call.split(' ')[0]!;
        const key = method === 'hset' || method === 'hget' ? 'account' : 'wallet';
        const plain = !call.includes('token') && method !== 'set' && method !== 'hset';
        expect(error, `${name} ${call}: ${error.message}`).toBeInstanceOf(RedisUnavailableError);
        expect(error.message, call).toMatch(
          plain
            ? new RegExp(`^FencedRedis\\.${method}\\(\\): Redis refused the read of ${method === 'fence' ? 'the fencing token of ' : ''}"${key}:\\{7\\}" for now \\(.*BUSY.*\\)\\. `)
            : new RegExp(`^FencedRedis\\.${method}\\(\\): Redis refused the (write to|read for update of) "${key}:\\{7\\}" for now \\(.*BUSY.*\\), so nothing was (written|claimed or read)\\.`),
        );
        expect(String((error.cause as Error | undefined)?.message), call).toMatch(/BUSY/);
      }
    } finally {
      await admin.call('SCRIPT', 'KILL').catch(() => undefined);
      await looping;
      busy.disconnect();
    }
    // Nothing written, no token kept; the server serves again.
    expect(await admin.exists('wallet:{7}', 'account:{7}', '{7}:fence')).toBe(0);
    await fenced.set('wallet:{7}', '100', 5);
    expect(await fenced.get('wallet:{7}')).toBe('100');
    await admin.del('wallet:{7}', '{7}:fence');
  });
});
