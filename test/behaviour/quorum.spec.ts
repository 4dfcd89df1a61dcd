import { Redis } from 'ioredis';
import { createLockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';

let servers: RedisServer[] = [];
let admins: Redis[] = [];

const backend: LockBackend = shareBackend({
  queues: false,
  async start() {
    servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
    admins = servers.map((server) => new Redis(server.url));
  },
  async stop() {
    for (const admin of admins) admin.disconnect();
    await Promise.all(servers.map((server) => server.stop()));
  },
  open: (options) => createLockApp({ redis: servers.map((server) => server.url), ...options }),
  async steal(key) {
    await Promise.all(admins.map((admin) => admin.del(`lock:{${key}}`)));
  },
  // One master: the others' counters still give a majority's highest token.
  async forgetFence(key) {
    await admins[0]!.del(`lock:{${key}}:fence`);
  },
}, 5);

describeLockBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeSemaphoreBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeMultiKeyBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeReadWriteBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeBargingBehaviour('quorum of 3 independent masters (ioredis)', backend);
