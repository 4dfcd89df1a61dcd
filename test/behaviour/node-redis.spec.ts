import { Redis } from 'ioredis';
import { nodeRedisClient, nodeRedisLockApp, type NodeRedisVersion } from '../support/node-redis.js';
import { redisUrl } from '../support/redis.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';

for (const version of [6, 5] as NodeRedisVersion[]) {
  let admin: Redis;
  const backend: LockBackend = shareBackend({
    queues: true,
    async start() {
      admin = new Redis(redisUrl());
    },
    async stop() {
      await admin.quit();
    },
    open: async (options) => nodeRedisLockApp([await nodeRedisClient(redisUrl(), version)], options),
    async steal(key) {
      await admin.del(`lock:{${key}}`);
    },
    async forgetFence(key) {
      await admin.del(`lock:{${key}}:fence`);
    },
  }, 6);
  describeLockBehaviour(`one Redis (node-redis ${version})`, backend);
  describeSemaphoreBehaviour(`one Redis (node-redis ${version})`, backend);
  describeMultiKeyBehaviour(`one Redis (node-redis ${version})`, backend);
  describeReadWriteBehaviour(`one Redis (node-redis ${version})`, backend);
  describeLockBehaviour(`one Redis (node-redis ${version}), barging`, barging(backend));
  describeBargingBehaviour(`one Redis (node-redis ${version})`, backend);
}
