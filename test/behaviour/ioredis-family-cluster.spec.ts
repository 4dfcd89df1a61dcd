import { handedLockApp, openClient, type HandedClientName } from '../support/handed-clients.js';
import { clusterBackend } from './backends.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';

// Cluster clients of ioredis' API handed in: iovalkey's and ioredis 6's (ioredis 5 in cluster.spec.ts).
const NAMES: HandedClientName[] = ['iovalkey', 'ioredis 6'];
// One Cluster for the suites of both clients.
const shared = clusterBackend(() => Promise.reject(new Error('opened per client below')), 4 * NAMES.length);

for (const name of NAMES) {
  const backend: LockBackend = { ...shared, open: async (options) => handedLockApp(await openClient(name, shared.nodes()), options) };
  describeLockBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
  describeSemaphoreBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
  describeMultiKeyBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
  describeReadWriteBehaviour(`Redis Cluster, 3 masters (${name})`, backend);
}
