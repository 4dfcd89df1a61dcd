import { Redis } from 'ioredis';
import { createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';

let admin: Redis;

const backend: LockBackend = shareBackend({
  queues: true,
  async start() {
    admin = new Redis(redisUrl());
  },
  async stop() {
    await admin.quit();
  },
  open: (options) => createLockApp(options),
  async steal(key) {
    await admin.del(`lock:{${key}}`);
  },
  async forgetFence(key) {
    await admin.del(`lock:{${key}}:fence`);
  },
}, 6);

describeLockBehaviour('one Redis (ioredis)', backend);
describeSemaphoreBehaviour('one Redis (ioredis)', backend);
describeMultiKeyBehaviour('one Redis (ioredis)', backend);
describeReadWriteBehaviour('one Redis (ioredis)', backend);
describeLockBehaviour('one Redis (ioredis), barging', barging(backend));
describeBargingBehaviour('one Redis (ioredis)', backend);
