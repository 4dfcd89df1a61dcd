import { handedLockApp, openClient } from '../support/handed-clients.js';
import { redisUrl } from '../support/redis.js';
import { oneRedisBackend } from './backends.js';
import { describeLockBehaviour } from './lock-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { describeBargingBehaviour } from './barging-behaviour.js';
import { describeSemaphoreBehaviour } from './semaphore-behaviour.js';

// A Valkey GLIDE GlideClient handed in, through the GLIDE driver.
const backend = oneRedisBackend(async (options) => handedLockApp(await openClient('GLIDE', redisUrl()), options), 5);

describeLockBehaviour('one Redis (GLIDE)', backend);
describeSemaphoreBehaviour('one Redis (GLIDE)', backend);
describeMultiKeyBehaviour('one Redis (GLIDE)', backend);
describeReadWriteBehaviour('one Redis (GLIDE)', backend);
describeBargingBehaviour('one Redis (GLIDE)', backend);
