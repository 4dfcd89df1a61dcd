import { Redis } from 'ioredis';
import { nodeRedisClient, nodeRedisLockApp, type NodeRedisVersion } from '../support/node-redis.js';
import { redisUrl } from '../support/redis.js';
import { describeLockBehaviour } from './lock-behaviour.js';

for (const version of [6, 5] as NodeRedisVersion[]) {
  let admin: Redis;
  describeLockBehaviour(`one Redis (node-redis ${version})`, {
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
  });
}
