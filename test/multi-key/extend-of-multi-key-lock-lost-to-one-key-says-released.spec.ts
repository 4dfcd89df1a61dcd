/**
 * Found by review (thirty-second session, read-write and multi-key locks). `Lock.extend()`
 * "Rejects with `LockLostError` if Redis no longer holds the lock for this owner", and one key's
 * lock does. A multi-key lock lost because one key is gone from Redis gives its other keys back
 * (d5411c0), and its `extend()` then rejected with the first of those keys' refusal,
 * `RedisLockError: Lock "a" was released; acquire it again before extending it.`: a release the
 * caller never made, of a key that was not the one lost, and not a `LockLostError`, so that code
 * (and the HTTP interceptor: 503 for a loss) that handles a loss by its class missed it.
 */
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs, createLockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

interface Store {
  label: string;
  open(): Promise<{ locks: LockService; close(): Promise<void> }>;
  /** Takes key's lock away, as a failover that lost its write or an operator's DEL would. */
  steal(key: string): Promise<void>;
  done(): Promise<void>;
}

function redisStore(): Store {
  const redis = new Redis(redisUrl());
  return {
    label: 'redis',
    open: () => createLockApp({ ttl: 900 }),
    steal: async (key) => void (await redis.del(`lock:{${key}}`)),
    done: async () => redis.disconnect(),
  };
}

function memoryStore(): Store {
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

describe('extend() of a multi-key lock lost to one of its keys', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  for (const make of [redisStore, memoryStore]) {
    it(`rejects with the lock's LockLostError, not a release of another key (${make().label})`, { timeout: 20_000 }, async () => {
      const store = make();
      cleanups.push(() => store.done());
      const app = await store.open();
      cleanups.push(() => app.close());
      // The lost key sorts last: the keys given back come first.
      const [first, lost] = [`extend-lost:${store.label}:a`, `extend-lost:${store.label}:b`];
      const lock = await app.locks.acquire([first, lost]);
      await store.steal(lost);
      await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
      expect(lock.signal.reason).toMatchObject({ reason: 'refused', key: lost });
      const extended = await lock.extend().then(() => 'resolved', (error: unknown) => error);
      expect(extended).toBeInstanceOf(LockLostError);
      expect(extended).toBe(lock.signal.reason);
      await lock.release();
    });
  }
});
