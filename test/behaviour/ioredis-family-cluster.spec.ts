import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { handedLockApp, openClient, type HandedClientName } from '../support/handed-clients.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';

// Cluster clients of ioredis' API handed in: iovalkey's and ioredis 6's (ioredis 5 in cluster.spec.ts).
const NAMES: HandedClientName[] = ['iovalkey', 'ioredis 6'];
let cluster: RedisCluster;
let admin: Cluster;
// One Cluster for the suites of both clients.
const shared: LockBackend = shareBackend({
  queues: true,
  async start() {
    cluster = await startRedisCluster(3);
    admin = new Cluster(cluster.nodes);
  },
  async stop() {
    admin?.disconnect();
    await cluster?.stop();
  },
  open: () => Promise.reject(new Error('opened per client below')),
  async steal(key) {
    await admin.del(`lock:{${key}}`);
  },
  async forgetFence(key) {
    await admin.del(`lock:{${key}}:fence`);
  },
}, 4 * NAMES.length);

for (const name of NAMES) {
  const backend: LockBackend = { ...shared, open: async (options) => handedLockApp(await openClient(name, cluster.nodes), options) };
  describeLockBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
  describeSemaphoreBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
  describeMultiKeyBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
  describeReadWriteBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
}
