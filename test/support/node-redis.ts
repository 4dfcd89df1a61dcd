import { createClient as createClient6, createCluster as createCluster6 } from 'redis';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { createLockApp, type LockApp } from './lock-app.js';

/** What the tests use of a node-redis client, cluster or Sentinel client, whatever its version. */
export interface TestClient {
  readonly isOpen: boolean;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  sendCommand(...args: never[]): Promise<unknown>;
}

/** node-redis' factories, with their generics (which differ between 5 and 6) left out. */
export type Factory = (options: object) => TestClient;

export type NodeRedisVersion = 5 | 6;

/** The node-redis majors the library accepts, each as installed for the tests (`redis`, `redis5`). */
export const NODE_REDIS: Record<NodeRedisVersion, { createClient: Factory; createCluster: Factory }> = {
  6: { createClient: createClient6 as unknown as Factory, createCluster: createCluster6 as unknown as Factory },
  5: { createClient: createClient5 as unknown as Factory, createCluster: createCluster5 as unknown as Factory },
};

/** A connected node-redis client on `url`; errors are the test's to see, not printed. */
export async function nodeRedisClient(url: string, version: NodeRedisVersion = 6): Promise<TestClient> {
  const client = NODE_REDIS[version].createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** A connected node-redis cluster client over `nodes`. */
export async function nodeRedisCluster(nodes: { host: string; port: number }[], version: NodeRedisVersion = 6): Promise<TestClient> {
  const cluster = NODE_REDIS[version].createCluster({ rootNodes: nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })) });
  cluster.on('error', () => undefined);
  await cluster.connect();
  return cluster;
}

/**
 * A lock app on node-redis clients the test opened (one, or several in quorum mode). The module
 * must not close them: closing the app checks they are still open, then closes them.
 */
export async function nodeRedisLockApp(clients: TestClient[], options: Partial<RedisLockModuleOptions> = {}): Promise<LockApp> {
  const app = await createLockApp({ redis: (clients.length === 1 ? clients[0] : clients) as RedisLockModuleOptions['redis'], ...options });
  return {
    ...app,
    async close() {
      await app.close();
      const closed = clients.filter((client) => !client.isOpen).length;
      await Promise.all(clients.filter((client) => client.isOpen).map((client) => client.close()));
      if (closed > 0) throw new Error(`the module closed ${closed} node-redis client(s) it was handed`);
    },
  };
}
