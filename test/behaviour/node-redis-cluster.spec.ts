import { nodeRedisCluster, nodeRedisLockApp, type NodeRedisVersion } from '../support/node-redis.js';
import { clusterBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';

for (const version of [6, 5] as NodeRedisVersion[]) {
  const backend = clusterBackend(async (nodes, options) => nodeRedisLockApp([await nodeRedisCluster(nodes, version)], options), 5);
  describeLockBehaviour(`Redis Cluster, 3 masters (node-redis ${version})`, backend);
  describeSemaphoreBehaviour(`Redis Cluster, 3 masters (node-redis ${version})`, backend);
  describeMultiKeyBehaviour(`Redis Cluster, 3 masters (node-redis ${version})`, backend);
  describeReadWriteBehaviour(`Redis Cluster, 3 masters (node-redis ${version})`, backend);
  describeBargingBehaviour(`Redis Cluster, 3 masters (node-redis ${version})`, backend);
}
