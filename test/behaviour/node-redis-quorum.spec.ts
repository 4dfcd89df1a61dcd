import { nodeRedisClient, nodeRedisLockApp } from '../support/node-redis.js';
import { quorumBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';

describeLockBehaviour(
  'quorum of 3 independent masters (node-redis 6)',
  quorumBackend(async (urls, options) => nodeRedisLockApp(await Promise.all(urls.map((url) => nodeRedisClient(url))), options), 1),
);
