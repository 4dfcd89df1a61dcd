import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { handedLockApp, openClient } from '../support/handed-clients.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';

// A Valkey GLIDE GlideClusterClient handed in, through the GLIDE driver.
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
  open: async (options) => handedLockApp(await openClient('GLIDE', cluster.nodes), options),
  async steal(key) {
    await admin.del(`lock:{${key}}`);
  },
  async forgetFence(key) {
    await admin.del(`lock:{${key}}:fence`);
  },
}, 5);

describeLockBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeSemaphoreBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeMultiKeyBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeReadWriteBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeBargingBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
