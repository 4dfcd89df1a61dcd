import { Cluster, Redis } from 'ioredis';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import type { LockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import type { LockBackend } from './lock-behaviour.js';
import { shareBackend } from './semaphore-behaviour.js';

type Open = LockBackend['open'];

/**
 * The test server (this worker's database) as a backend of `suites` suites (`shareBackend`):
 * `open` makes its applications (with the client under test), a plain ioredis client steals
 * keys.
 */
export function oneRedisBackend(open: Open, suites: number): LockBackend {
  let admin: Redis;
  return shareBackend({
    queues: true,
    async start() {
      admin = new Redis(redisUrl());
    },
    async stop() {
      await admin.quit();
    },
    open,
    async steal(key) {
      await admin.del(`lock:{${key}}`);
    },
    async forgetFence(key) {
      await admin.del(`lock:{${key}}:fence`);
    },
  }, suites);
}

/**
 * A 3-master Redis Cluster of the file's own as a backend of `suites` suites (`shareBackend`):
 * `open(nodes, options)` makes its applications on the cluster's `nodes`, an ioredis Cluster
 * client steals keys; `nodes()` reads them once the backend started.
 */
export function clusterBackend(
  open: (nodes: RedisCluster['nodes'], options?: Partial<RedisLockModuleOptions>) => Promise<LockApp>,
  suites: number,
): LockBackend & { nodes(): RedisCluster['nodes'] } {
  let cluster: RedisCluster;
  let admin: Cluster;
  const backend = shareBackend({
    queues: true,
    async start() {
      cluster = await startRedisCluster(3);
      admin = new Cluster(cluster.nodes);
    },
    async stop() {
      admin?.disconnect();
      await cluster?.stop();
    },
    open: (options) => open(cluster.nodes, options),
    async steal(key) {
      await admin.del(`lock:{${key}}`);
    },
    async forgetFence(key) {
      await admin.del(`lock:{${key}}:fence`);
    },
  }, suites);
  return { ...backend, nodes: () => cluster.nodes };
}

/**
 * Three independent redis-servers of the file's own, in quorum mode, as a backend of `suites`
 * suites (`shareBackend`): `open(urls, options)` makes its applications on the servers' `urls`;
 * a key is stolen from every master, a fencing counter forgotten on one (the others' still give
 * a majority's highest token). Waiters do not queue in quorum mode.
 */
export function quorumBackend(open: (urls: string[], options?: Partial<RedisLockModuleOptions>) => Promise<LockApp>, suites: number): LockBackend {
  let servers: RedisServer[] = [];
  let admins: Redis[] = [];
  return shareBackend({
    queues: false,
    async start() {
      servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
      admins = servers.map((server) => new Redis(server.url));
    },
    async stop() {
      for (const admin of admins) admin.disconnect();
      await Promise.all(servers.map((server) => server.stop()));
    },
    open: (options) => open(servers.map((server) => server.url), options),
    async steal(key) {
      await Promise.all(admins.map((admin) => admin.del(`lock:{${key}}`)));
    },
    async forgetFence(key) {
      await admins[0]!.del(`lock:{${key}}:fence`);
    },
  }, suites);
}
