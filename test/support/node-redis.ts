import { createClient as createClient6, createCluster as createCluster6 } from 'redis';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { createLockApp, type LockApp } from './lock-app.js';

/** The node-redis majors the library accepts, each as installed for the tests (`redis`, `redis5`). */
export const NODE_REDIS = {
  6: { createClient: createClient6, createCluster: createCluster6 },
  5: { createClient: createClient5, createCluster: createCluster5 },
} as const;

export type NodeRedisVersion = keyof typeof NODE_REDIS;

/** A connected node-redis client on `url`; errors are the test's to see, not printed. */
export async function nodeRedisClient(url: string, version: NodeRedisVersion = 6) {
  const client = NODE_REDIS[version].createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** A connected node-redis cluster client over `nodes`. */
export async function nodeRedisCluster(nodes: { host: string; port: number }[], version: NodeRedisVersion = 6) {
  const cluster = NODE_REDIS[version].createCluster({ rootNodes: nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })) });
  cluster.on('error', () => undefined);
  await cluster.connect();
  return cluster;
}

/**
 * A lock app on node-redis clients the test opened (one, or several in quorum mode). The module
 * must not close them: closing the app checks they are still open, then closes them.
 */
export async function nodeRedisLockApp(clients: { isOpen: boolean; close(): Promise<unknown> }[], options: Partial<RedisLockModuleOptions> = {}): Promise<LockApp> {
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
