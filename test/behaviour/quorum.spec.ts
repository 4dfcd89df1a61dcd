import { createLockApp } from '../support/lock-app.js';
import { quorumBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';

const backend = quorumBackend((urls, options) => createLockApp({ redis: urls, ...options }), 5);

describeLockBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeSemaphoreBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeMultiKeyBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeReadWriteBehaviour('quorum of 3 independent masters (ioredis)', backend);
describeBargingBehaviour('quorum of 3 independent masters (ioredis)', backend);
