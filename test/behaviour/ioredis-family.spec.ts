import { handedLockApp, openClient, type HandedClientName } from '../support/handed-clients.js';
import { redisUrl } from '../support/redis.js';
import { oneRedisBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';

// Clients of ioredis' API handed in: iovalkey (Valkey's fork) and ioredis 6 (ioredis 5 in redis.spec.ts).
for (const name of ['iovalkey', 'ioredis 6'] as HandedClientName[]) {
  const backend = oneRedisBackend(async (options) => handedLockApp(await openClient(name, redisUrl()), options), 5);
  describeLockBehaviour(`one Redis (${name})`, backend);
  describeSemaphoreBehaviour(`one Redis (${name})`, backend);
  describeMultiKeyBehaviour(`one Redis (${name})`, backend);
  describeReadWriteBehaviour(`one Redis (${name})`, backend);
  describeBargingBehaviour(`one Redis (${name})`, backend);
}
