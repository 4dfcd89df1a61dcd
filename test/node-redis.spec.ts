import { Redis } from 'ioredis';
import { RESP_TYPES } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listLocks } from '../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../lib/core/engine/lock-manager.js';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import { LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { RedisLockHealthIndicator } from '../lib/terminus/index.js';
import { createLockApp, sleep } from './support/lock-app.js';
import { countAttempts, releaseBetweenPolls } from './support/mechanism.js';
import { isScriptCall, watchCommands } from './support/monitor.js';
import { nodeRedisClient, nodeRedisLockApp, NODE_REDIS, type NodeRedisVersion, type TestClient } from './support/node-redis.js';
import { subscribers } from './support/redis.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { terminusLockModule } from './support/terminus-app.js';

describe.each([6, 5] as NodeRedisVersion[])('node-redis %i client', (version) => {
  // A server of its own: SCRIPT FLUSH here cannot race with scripts other test files load.
  let server: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });
  const open = async (options = {}) => nodeRedisLockApp([await nodeRedisClient(server.url, version)], options);
  /** A connected client whose reconnect strategy waits `delay` ms, and the retry counts it was asked with. */
  const clientRetryingEvery = async (delay: number): Promise<{ client: TestClient; asked: number[] }> => {
    const asked: number[] = [];
    const client = NODE_REDIS[version].createClient({
      url: server.url,
      socket: {
        reconnectStrategy: (retries: number) => {
          asked.push(retries);
          return delay;
        },
      },
    });
    client.on('error', () => undefined);
    await client.connect();
    return { client, asked };
  };

  it('sends scripts by SHA: after SCRIPT FLUSH the first call of each falls back to EVAL, later calls are EVALSHA', async () => {
    const app = await open();
    try {
      await admin.script('FLUSH');
      const commands = await watchCommands('lock:{cached}', server.url);
      for (let i = 0; i < 3; i++) await (await app.locks.acquire('cached')).release();
      await commands.stop();
      const calls = commands.seen.filter(isScriptCall).map(({ args }) => args[0]!.toUpperCase());
      // acquire (EVALSHA refused, EVAL), release (the same), then EVALSHA only.
      expect(calls).toEqual(['EVALSHA', 'EVAL', 'EVALSHA', 'EVAL', 'EVALSHA', 'EVALSHA', 'EVALSHA', 'EVALSHA']);
      expect(commands.seen.filter(isScriptCall).every(({ args }) => args[0]!.toUpperCase() === 'EVAL' || /^[0-9a-f]{40}$/.test(args[1]!))).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('wakes a waiter in another instance with the release message, not by polling the lease', async () => {
    const holder = await open({ ttl: 20_000 });
    const waiter = await open();
    try {
      const held = await holder.locks.acquire('wake');
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire('wake', { waitTimeout: 15_000 });
      // The waiter's subscription exists on the server before the release.
      await expect.poll(() => subscribers(admin, 'lock:{wake}:released'), { timeout: 5_000 }).toBe(1);
      const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      // A poll would have made an attempt (and found the lock handed to it).
      expect(attemptsSinceRelease).toBe(0);
      expect(next.fencingToken).toBe(held.fencingToken + 1);
      await next.release();
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  it("reconnects a dropped subscriber with the client's reconnect strategy and subscribes again: the release message wakes the waiter", async () => {
    // The application's strategy, seen by the library: only the subscriber is dropped below.
    const { client, asked } = await clientRetryingEvery(20);
    const holder = await open({ ttl: 20_000 });
    const waiter = await nodeRedisLockApp([client]);
    try {
      const held = await holder.locks.acquire('dropped');
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire('dropped', { waitTimeout: 15_000 });
      const subscribed = () => subscribers(admin, 'lock:{dropped}:released');
      await expect.poll(subscribed, { timeout: 5_000 }).toBe(1);
      expect(Number(await admin.client('KILL', 'TYPE', 'pubsub'))).toBe(1);
      await expect.poll(subscribed, { timeout: 5_000 }).toBe(1);
      expect(asked[0]).toBe(0);
      const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      expect(attemptsSinceRelease).toBe(0);
      await next.release();
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  it('closes with a waiter whose subscription waits for the subscriber to reconnect, without waiting for that attempt', async () => {
    const { client, asked } = await clientRetryingEvery(60_000);
    const holder = await open({ ttl: 20_000 });
    const app = await nodeRedisLockApp([client]);
    try {
      await holder.locks.acquire('refused-a');
      await holder.locks.acquire('refused-b');
      const first = app.locks.acquire('refused-a', { waitTimeout: 60_000 }).catch((error: unknown) => error);
      await expect.poll(() => subscribers(admin, 'lock:{refused-a}:released'), { timeout: 5_000 }).toBe(1);
      // Redis drops the subscriber and refuses it: its next attempt is a minute away.
      await admin.config('SET', 'maxclients', '1');
      expect(Number(await admin.client('KILL', 'TYPE', 'pubsub'))).toBe(1);
      await expect.poll(() => asked.length).toBe(1);
      // This waiter's subscription waits for that attempt.
      const second = app.locks.acquire('refused-b', { waitTimeout: 60_000 }).catch((error: unknown) => error);
      await sleep(100);
      await app.close();
      expect(await first).toBeInstanceOf(Error);
      expect(await second).toBeInstanceOf(Error);
      // No second attempt: the close did not wait for it.
      expect(asked).toEqual([0]);
    } finally {
      await admin.config('SET', 'maxclients', '10000');
      await holder.close();
    }
  });

  it('never closes the client it was handed: it keeps working after app.close()', async () => {
    const client = await nodeRedisClient(server.url, version);
    const app = await createLockApp({ redis: client as never });
    const lock = await app.locks.acquire('owned-by-the-app');
    await app.close();
    expect(client.isOpen).toBe(true);
    expect(await (client.sendCommand as (args: string[]) => Promise<unknown>)(['PING'])).toBe('PONG');
    // The lock was given back at shutdown, through the client that is still open.
    expect(lock.held).toBe(false);
    expect(await admin.exists('lock:{owned-by-the-app}')).toBe(0);
    await client.close();
  });

  // node-redis 6 added an ioredis-like `keyPrefix` (for keys, not channels); 5 has none.
  it.runIf(version === 6)('applies a node-redis 6 keyPrefix to every key, and still wakes waiters', async () => {
    const a = await nodeRedisLockApp([await prefixedClient(server.url)], { ttl: 20_000 });
    const b = await nodeRedisLockApp([await prefixedClient(server.url)]);
    try {
      const held = await a.locks.acquire('p');
      expect(await admin.exists('app:lock:{p}')).toBe(1);
      expect(await admin.exists('lock:{p}')).toBe(0);
      const manager = a.locks[LOCK_RUNNER] as LockManager;
      expect((await listLocks(manager, '0', 100)).locks.map((lock) => lock.key)).toEqual(['p']);
      expect(await a.locks.inspect('p')).toMatchObject({ held: true, fencingToken: held.fencingToken });
      const attempts = countAttempts(b.locks);
      const waiting = b.locks.acquire('p', { waitTimeout: 15_000 });
      await expect.poll(() => subscribers(admin, 'app:lock:{p}:released')).toBe(1);
      const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      await next.release();
      // Woken by the message on the (unprefixed) channel: a poll would have made an attempt.
      expect(attemptsSinceRelease).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  /** The `AbortSignal.timeout()` calls node-redis makes (one per command with a timeout) while `run` runs. */
  const commandTimeouts = async (run: () => Promise<void>): Promise<number[]> => {
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    const seen: number[] = [];
    AbortSignal.timeout = (ms: number) => {
      seen.push(ms);
      return timeout(ms);
    };
    try {
      await run();
    } finally {
      AbortSignal.timeout = timeout;
    }
    return seen;
  };

  it("sends the library's commands without node-redis' default per-command timeout", async () => {
    // node-redis 6 gives every command a 5 s timeout unless configured. It bounds only the wait to
    // be written, and costs each command an AbortSignal.timeout() and its listeners: more than
    // half a lock pair's Node CPU. The library bounds its own waits (attempts, renewals within the
    // lease, shutdown), so its commands go without that default, on every node-redis version alike.
    const client = NODE_REDIS[version].createClient({ url: server.url });
    client.on('error', () => undefined);
    await client.connect();
    const app = await nodeRedisLockApp([client]);
    try {
      const seen = await commandTimeouts(async () => {
        for (let i = 0; i < 10; i++) await (await app.locks.acquire(`no-client-timeout:${i % 2}`)).release();
      });
      expect(seen).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('keeps a command timeout the application configured on the client for its own commands and the library\'s', async () => {
    const client = NODE_REDIS[version].createClient({ url: server.url, commandOptions: { timeout: 4_321 } });
    client.on('error', () => undefined);
    await client.connect();
    const app = await nodeRedisLockApp([client]);
    try {
      const seen = await commandTimeouts(async () => {
        for (let i = 0; i < 10; i++) await (await app.locks.acquire(`client-timeout:${i % 2}`)).release();
        await (client as unknown as { sendCommand(args: string[]): Promise<unknown> }).sendCommand(['PING']);
      });
      // Every lock command and the application's PING, each with the configured timeout.
      expect(seen.length).toBeGreaterThanOrEqual(21);
      expect(new Set(seen)).toEqual(new Set([4_321]));
    } finally {
      await app.close();
    }
  });

  it('reads replies in default types from a client with a type mapping (Buffers for strings)', async () => {
    const base = await nodeRedisClient(server.url, version);
    const mapped = (base as unknown as { withTypeMapping(mapping: object): TestClient }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer, [RESP_TYPES.SIMPLE_STRING]: Buffer });
    try {
      const scripts = new LockScripts(mapped as never);
      const keys = { lock: 'lock:{mapped}', fence: 'lock:{mapped}:fence', queue: 'lock:{mapped}:queue', waiters: 'lock:{mapped}:waiters', released: 'lock:{mapped}:released' };
      await admin.set(keys.fence, '10'); // a key locked before: tokens 11 and 12 below
      expect(await scripts.acquire(keys, 'first', 5_000, false, 1_000)).toEqual({ acquired: true, fencingToken: 11 });
      expect(await scripts.acquire(keys, 'second', 5_000, true, 1_000)).toMatchObject({ acquired: false });
      expect(await scripts.inspect(keys)).toMatchObject({ owner: 'first', fencingToken: 11, waiters: 1 });
      // The waiter a release hands the lock to is named by a string, as the notifier looks it up.
      expect(await scripts.release(keys, 'first', 1_000)).toEqual({ released: true, grant: { token: 'second', fencingToken: 12 } });
      await admin.del('lock:{restored}');
      expect(await scripts.restore('lock:{restored}', 'token', 5_000)).toBe(true);
      expect(await scripts.restore('lock:{restored}', 'other', 5_000)).toBe(false);
    } finally {
      await admin.del('lock:{mapped}', 'lock:{mapped}:fence', 'lock:{restored}');
      await base.close();
    }
  });

  it('refuses a client that is not connected, naming the option', async () => {
    const client = NODE_REDIS[version].createClient({ url: server.url });
    await expect(createLockApp({ redis: client as never })).rejects.toThrow(/Option "redis" must be a connected node-redis client/);
    const connected = async () => String(await admin.client('LIST')).split('\n').filter(Boolean).length;
    const before = await connected();
    await expect(createLockApp({ redis: [server.url, client as never, server.url.replace('127.0.0.1', 'localhost')] })).rejects.toThrow(/Option "redis\[1\]" must be a connected node-redis client/);
    // The connection opened for redis[0] before redis[1] was refused is closed, not leaked.
    await sleep(500);
    expect(await connected()).toBe(before);
  });

  it('refuses a client of another kind instead of taking it for ioredis options', async () => {
    const foreign = { sendCommand: async () => 'PONG' };
    await expect(createLockApp({ redis: foreign as never })).rejects.toThrow(/Option "redis" must be .*looks like a Redis client of another kind/);
  });

  it('answers inspect(), the board listing and the terminus indicator', async () => {
    const client = await nodeRedisClient(server.url, version);
    const moduleRef = await terminusLockModule(client);
    try {
      const locks = moduleRef.get(LockService);
      const held = await Promise.all(['board:a', 'board:b', 'board:c'].map((key) => locks.acquire(key, { label: `job ${key}` })));
      const waiting = locks.acquire('board:a', { waitTimeout: 10_000 });
      await expect.poll(async () => (await locks.inspect('board:a')).waiters).toBe(1);
      expect(await locks.inspect('board:a')).toMatchObject({ held: true, fencingToken: held[0]!.fencingToken, waiters: 1, holder: { label: 'job board:a' } });
      const manager = locks[LOCK_RUNNER] as LockManager;
      const seen: string[] = [];
      let cursor = '0';
      let pages = 0;
      do {
        const page = await listLocks(manager, cursor, 1);
        seen.push(...page.locks.map((lock) => lock.key));
        cursor = page.cursor;
      } while (cursor !== '0' && ++pages < 100);
      expect([...new Set(seen)].sort()).toEqual(['board:a', 'board:b', 'board:c']);
      const health = await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks', { showDetails: true });
      expect(health.locks.status).toBe('up');
      expect((health.locks as unknown as { nodes: { status: string; latencyMs: number; address?: string }[] }).nodes).toEqual([{ status: 'up', latencyMs: expect.any(Number), address: expect.stringMatching(/^127\.0\.0\.1:\d+$/) }]);
      await Promise.all(held.map((lock) => lock.release()));
      await (await waiting).release();
    } finally {
      await moduleRef.close();
      expect(client.isOpen).toBe(true);
      await client.close();
    }
  });
});

async function prefixedClient(url: string): Promise<TestClient> {
  const client = NODE_REDIS[6].createClient({ url, keyPrefix: 'app:' });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
