import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { nodeRedisCluster, nodeRedisLockApp, type NodeRedisVersion } from '../support/node-redis.js';
import { describeLockBehaviour } from './lock-behaviour.js';

for (const version of [6, 5] as NodeRedisVersion[]) {
  let cluster: RedisCluster;
  let admin: Cluster;
  describeLockBehaviour(`Redis Cluster, 3 masters (node-redis ${version})`, {
    queues: true,
    async start() {
      cluster = await startRedisCluster(3);
      admin = new Cluster(cluster.nodes);
    },
    async stop() {
      admin?.disconnect();
      await cluster?.stop();
    },
    open: async (options) => nodeRedisLockApp([await nodeRedisCluster(cluster.nodes, version)], options),
    async steal(key) {
      await admin.del(`lock:{${key}}`);
    },
  });
}
