import type { Provider } from '@nestjs/common';
import type { LockManager } from '../core/engine/lock-manager.js';
import { LockScripts } from '../core/stores/redis/lock-scripts.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import { LockService } from '../lock.service.js';
import { LOCK_RUNNER } from '../redis-lock.constants.js';
import type { InMemoryLocks } from '../testing/in-memory-locks.js';
import { FencedRedis } from './fenced-redis.js';
import { locksGivenBack } from './locks-given-back.js';
import { RedisFencedStore, type FencedStore } from './fenced-store.js';
import { FENCED_CLOSED, FENCED_STORE } from './memory-fenced-store.js';

/**
 * `FencedRedis` on the module's own connection, found when first used: an application in
 * quorum mode that never writes through it starts as before. With `waitForReplicas`, its writes
 * and reads for update wait for the replicas on the acquisitions' connection, as they do. Its
 * calls end, and new ones are refused, once `app.close()` gave the module's locks back.
 */
export const FENCED_REDIS_PROVIDER: Provider = {
  provide: FencedRedis,
  inject: [LockService],
  useFactory: (locks: LockService) => {
    let store: FencedStore | undefined;
    // A test's fake LockService has no engine: the module's startup refuses it, naming it (see
    // LockSchedulingExplorer), after the providers are made, so none is read here.
    const runner = (locks as Partial<LockService> | undefined)?.[LOCK_RUNNER] as LockManager | undefined;
    const givenBack = runner === undefined ? undefined : locksGivenBack(runner);
    const source = {
      [FENCED_CLOSED]: (): boolean => givenBack?.aborted === true,
      [FENCED_STORE]: (): FencedStore => {
        if (store !== undefined) return store;
        const manager = locks[LOCK_RUNNER] as LockManager;
        const clients = manager.clients;
        if (clients.length !== 1) {
          throw new RedisLockError(
            `The injected FencedRedis writes through the module's Redis connection, and this module has ${clients.length} (quorum mode): ` +
              'data belongs on one Redis, not on independent lock masters. Make one for the Redis that holds the data: new FencedRedis(client).',
          );
        }
        return (store = new RedisFencedStore(clients[0]!, manager.store instanceof LockScripts ? manager.store.replicaWaiter : undefined, givenBack));
      },
    };
    return new FencedRedis(source as unknown as InMemoryLocks);
  },
};
