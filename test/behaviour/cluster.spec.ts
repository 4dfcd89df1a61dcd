import { Cluster } from 'ioredis';
import { createLockApp } from '../support/lock-app.js';
import { clusterBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';

// The module never closes a client handed in: each app's is disconnected when the app closes,
// or it would go on reconnecting to the stopped cluster in the files after this one.
const backend = clusterBackend(async (nodes, options) => {
  const client = new Cluster(nodes);
  const app = await createLockApp({ redis: client, ...options }).catch((error: unknown) => {
    client.disconnect();
    throw error;
  });
  return { ...app, close: async () => void (await app.close(), client.disconnect()) };
}, 6);

describeLockBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeSemaphoreBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeMultiKeyBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeReadWriteBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeLockBehaviour('Redis Cluster, 3 masters (ioredis), barging', barging(backend));
describeBargingBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
