import { Test } from '@nestjs/testing';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import type { MemoryData } from '../../lib/core/stores/memory/memory-data.js';
import { CapturedLogs } from '../support/lock-app.js';
import { describeLockBehaviour, type LockBackend } from './lock-behaviour.js';
import { describeSemaphoreBehaviour, shareBackend } from './semaphore-behaviour.js';
import { describeMultiKeyBehaviour } from './multi-key-behaviour.js';
import { describeReadWriteBehaviour } from './rwlock-behaviour.js';
import { barging, describeBargingBehaviour } from './barging-behaviour.js';

const locks = new InMemoryLocks();

const backend: LockBackend = shareBackend({
  queues: true,
  async start() {},
  async stop() {
    locks.clear();
  },
  async open(options = {}) {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks, ...options })] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    return { locks: moduleRef.get(LockService), logs, close: () => moduleRef.close() };
  },
  async steal(key) {
    locks.delete(`lock:{${key}}`);
  },
  // What an expired fenceRetention does; the store has no call for it (nor needs one).
  async forgetFence(key) {
    (locks as unknown as { data: MemoryData }).data.fences.delete(`lock:{${key}}:fence`);
  },
}, 6);

describeLockBehaviour('in memory (nestjs-redis-lock/testing)', backend);
describeSemaphoreBehaviour('in memory (nestjs-redis-lock/testing)', backend);
describeMultiKeyBehaviour('in memory (nestjs-redis-lock/testing)', backend);
describeReadWriteBehaviour('in memory (nestjs-redis-lock/testing)', backend);
describeLockBehaviour('in memory (nestjs-redis-lock/testing), barging', barging(backend));
describeBargingBehaviour('in memory (nestjs-redis-lock/testing)', backend);
