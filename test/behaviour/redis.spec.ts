import { Redis } from 'ioredis';
import { createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';
import { describeLockBehaviour } from './lock-behaviour.js';

let admin: Redis;

describeLockBehaviour('one Redis (ioredis)', {
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
});
