import { createLockApp } from '../support/lock-app.js';
import { oneRedisBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';

const backend = oneRedisBackend((options) => createLockApp(options), 6);

describeLockBehaviour('one Redis (ioredis)', backend);
describeSemaphoreBehaviour('one Redis (ioredis)', backend);
describeMultiKeyBehaviour('one Redis (ioredis)', backend);
describeReadWriteBehaviour('one Redis (ioredis)', backend);
describeLockBehaviour('one Redis (ioredis), barging', barging(backend));
describeBargingBehaviour('one Redis (ioredis)', backend);
