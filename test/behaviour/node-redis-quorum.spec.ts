import { Redis } from 'ioredis';
import { nodeRedisClient, nodeRedisLockApp } from '../support/node-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { describeLockBehaviour } from './lock-behaviour.js';

let servers: RedisServer[] = [];
let admins: Redis[] = [];

describeLockBehaviour('quorum of 3 independent masters (node-redis 6)', {
  queues: false,
  async start() {
    servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
    admins = servers.map((server) => new Redis(server.url));
  },
  async stop() {
    for (const admin of admins) admin.disconnect();
    await Promise.all(servers.map((server) => server.stop()));
  },
  open: async (options) => nodeRedisLockApp(await Promise.all(servers.map((server) => nodeRedisClient(server.url))), options),
  async steal(key) {
    await Promise.all(admins.map((admin) => admin.del(`lock:{${key}}`)));
  },
  // One master: the others' counters still give a majority's highest token.
  async forgetFence(key) {
    await admins[0]!.del(`lock:{${key}}:fence`);
  },
});
