import { Redis } from 'ioredis';
import { handedLockApp, openClient } from '../support/handed-clients.js';
import { redisUrl } from '../support/redis.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';

// A Valkey GLIDE GlideClient handed in, through the GLIDE driver.
let admin: Redis;
const backend: LockBackend = shareBackend({
  queues: true,
  async start() {
    admin = new Redis(redisUrl());
  },
  async stop() {
    await admin.quit();
  },
  open: async (options) => handedLockApp(await openClient('GLIDE', redisUrl()), options),
  async steal(key) {
    await admin.del(`lock:{${key}}`);
  },
  async forgetFence(key) {
    await admin.del(`lock:{${key}}:fence`);
  },
}, 5);

describeLockBehaviour('one Redis (GLIDE)', backend);
describeSemaphoreBehaviour('one Redis (GLIDE)', backend);
describeMultiKeyBehaviour('one Redis (GLIDE)', backend);
describeReadWriteBehaviour('one Redis (GLIDE)', backend);
describeBargingBehaviour('one Redis (GLIDE)', backend);
