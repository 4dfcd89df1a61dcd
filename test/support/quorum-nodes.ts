import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { createLockApp, sleep, type LockApp } from './lock-app.js';

/**
 * Three independent masters for the quorum specs, started once per file (`args(i)`: master i's
 * extra redis-server arguments); paused ones resumed and lock apps closed after each test.
 * `servers` is filled before the first test.
 */
export function useQuorumNodes(args: (i: number) => string[] = () => []) {
  const servers: RedisServer[] = [];
  const apps: LockApp[] = [];
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1, 2].map((i) => startRedisServer(args(i))))));
  });
  afterEach(async () => {
    for (const server of servers) server.resume();
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(() => Promise.all(servers.map((server) => server.stop())));

  /** A lock app in quorum mode over the three (or over `redis`), closed after the test. */
  async function app(options: Parameters<typeof createLockApp>[0] = {}, redis: string | string[] = servers.map((s) => s.url)): Promise<LockApp> {
    const created = await createLockApp({ redis, ...options });
    apps.push(created);
    return created;
  }
  /** Runs `fn` with a connection of its own to node `i`. */
  async function admin<T>(i: number, fn: (node: Redis) => Promise<T>): Promise<T> {
    const node = new Redis(servers[i]!.url);
    try {
      return await fn(node);
    } finally {
      node.disconnect();
    }
  }
  const get = (i: number, key: string): Promise<string | null> => admin(i, (node) => node.get(key));
  /** Polls until `cond` holds or `ms` pass; the last value. */
  async function until<T>(read: () => Promise<T>, cond: (value: T) => boolean, ms: number): Promise<T> {
    const deadline = performance.now() + ms;
    let value = await read();
    while (!cond(value) && performance.now() < deadline) {
      await sleep(50);
      value = await read();
    }
    return value;
  }
  return { servers, app, admin, get, until };
}

/**
 * Three independent masters for a quorum spec that builds its own applications and clients:
 * started once per file, resumed (a spec may leave one paused) and stopped after it.
 */
export function useQuorumServers(): readonly RedisServer[] {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1, 2].map(() => startRedisServer()))));
  });
  afterAll(async () => {
    for (const server of servers) server.resume();
    await Promise.all(servers.map((server) => server.stop()));
  });
  return servers;
}

/** A client of each of `servers`, its errors (a master paused or cut off) not reported. */
export function clientsOf(servers: readonly RedisServer[]): Redis[] {
  return servers.map((server) => {
    const client = new Redis(server.url);
    client.on('error', () => undefined);
    return client;
  });
}
