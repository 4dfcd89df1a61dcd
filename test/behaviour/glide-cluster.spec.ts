import { handedLockApp, openClient } from '../support/handed-clients.js';
import { clusterBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';

// A Valkey GLIDE GlideClusterClient handed in, through the GLIDE driver.
const backend = clusterBackend(async (nodes, options) => handedLockApp(await openClient('GLIDE', nodes), options), 5);

describeLockBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeSemaphoreBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeMultiKeyBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeReadWriteBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
describeBargingBehaviour('Redis Cluster, 3 masters (GLIDE)', backend);
