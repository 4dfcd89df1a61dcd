import { Cluster } from 'ioredis';
import { createLockApp } from '../support/lock-app.js';
import { clusterBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';

const backend = clusterBackend((nodes, options) => createLockApp({ redis: new Cluster(nodes), ...options }), 6);

describeLockBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeSemaphoreBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeMultiKeyBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeReadWriteBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
describeLockBehaviour('Redis Cluster, 3 masters (ioredis), barging', barging(backend));
describeBargingBehaviour('Redis Cluster, 3 masters (ioredis)', backend);
