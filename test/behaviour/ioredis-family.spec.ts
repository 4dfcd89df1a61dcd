import { Redis } from 'ioredis';
import { handedLockApp, openClient, type HandedClientName } from '../support/handed-clients.js';
import { redisUrl } from '../support/redis.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';

// Clients of ioredis' API handed in: iovalkey (Valkey's fork) and ioredis 6 (ioredis 5 in redis.spec.ts).
for (const name of ['iovalkey', 'ioredis 6'] as HandedClientName[]) {
  let admin: Redis;
  const backend: LockBackend = shareBackend({
    queues: true,
    async start() {
      admin = new Redis(redisUrl());
    },
    async stop() {
      await admin.quit();
    },
    open: async (options) => handedLockApp(await openClient(name, redisUrl()), options),
    async steal(key) {
      await admin.del(`lock:{${key}}`);
    },
    async forgetFence(key) {
      await admin.del(`lock:{${key}}:fence`);
    },
  }, 5);
  describeLockBehaviour(`one Redis (${name})`, backend);
  describeSemaphoreBehaviour(`one Redis (${name})`, backend);
  describeMultiKeyBehaviour(`one Redis (${name})`, backend);
  describeReadWriteBehaviour(`one Redis (${name})`, backend);
  describeBargingBehaviour(`one Redis (${name})`, backend);
}
