import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs, createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/** A store whose lock of a key a test can take away (ttl 900 ms), for a multi-key lock lost to one key. */
export interface Store {
  label: string;
  open(): Promise<{ locks: LockService; close(): Promise<void> }>;
  /** Takes key's lock away, as a failover that lost its write or an operator's DEL would. */
  steal(key: string): Promise<void>;
  done(): Promise<void>;
}

export function redisStore(): Store {
  // Connected at the first steal(), not here: a spec builds a store for its label alone (in a
  // test's title), which done() never closes, and a connection opened then would stay open in
  // the worker's later files (they share its process).
  const redis = new Redis(redisUrl(), { lazyConnect: true });
  return {
    label: 'redis',
    open: () => createLockApp({ ttl: 900 }),
    steal: async (key) => void (await redis.del(`lock:{${key}}`)),
    done: async () => redis.disconnect(),
  };
}

export function memoryStore(): Store {
  const store = new InMemoryLocks();
  return {
    label: 'memory',
    open: async () => {
      const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: store, ttl: 900 })] })
        .setLogger(new CapturedLogs())
        .compile();
      await moduleRef.init();
      return { locks: moduleRef.get(LockService), close: () => moduleRef.close() };
    },
    steal: async (key) => store.delete(key),
    done: async () => store.clear(),
  };
}
