import { nodeRedisClient, nodeRedisLockApp, type NodeRedisVersion } from '../support/node-redis.js';
import { redisUrl } from '../support/redis.js';
import { oneRedisBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';

for (const version of [6, 5] as NodeRedisVersion[]) {
  const backend = oneRedisBackend(async (options) => nodeRedisLockApp([await nodeRedisClient(redisUrl(), version)], options), 6);
  describeLockBehaviour(`one Redis (node-redis ${version})`, backend);
  describeSemaphoreBehaviour(`one Redis (node-redis ${version})`, backend);
  describeMultiKeyBehaviour(`one Redis (node-redis ${version})`, backend);
  describeReadWriteBehaviour(`one Redis (node-redis ${version})`, backend);
  describeLockBehaviour(`one Redis (node-redis ${version}), barging`, barging(backend));
  describeBargingBehaviour(`one Redis (node-redis ${version})`, backend);
}
