import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { createLockApp } from '../support/lock-app.js';
import { describeLockBehaviour } from './lock-behaviour.js';

let cluster: RedisCluster;
let admin: Cluster;

describeLockBehaviour('Redis Cluster, 3 masters (ioredis)', {
  queues: true,
  async start() {
    cluster = await startRedisCluster(3);
    admin = new Cluster(cluster.nodes);
  },
  async stop() {
    admin?.disconnect();
    await cluster?.stop();
  },
  open: (options) => createLockApp({ redis: new Cluster(cluster.nodes), ...options }),
  async steal(key) {
    await admin.del(`lock:{${key}}`);
  },
});
