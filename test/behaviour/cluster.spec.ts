import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { createLockApp } from '../support/lock-app.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';

let cluster: RedisCluster;
let admin: Cluster;

const backend: LockBackend = shareBackend({
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
  async forgetFence(key) {
    await admin.del(`lock:{${key}}:fence`);
  },
}, 6);

describeLockBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeSemaphoreBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeMultiKeyBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeReadWriteBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeLockBehaviour('Redis Cluster, 3 masters (ioredis), barging', barging(backend));
describeBargingBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
