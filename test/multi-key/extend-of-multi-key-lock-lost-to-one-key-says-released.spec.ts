/**
 * Found by review (thirty-second session, read-write and multi-key locks). `Lock.extend()`
 * "Rejects with `LockLostError` if Redis no longer holds the lock for this owner", and one key's
 * lock does. A multi-key lock lost because one key is gone from Redis gives its other keys back
 * (d5411c0), and its `extend()` then rejected with the first of those keys' refusal,
 * `RedisLockError: Lock "a" was released; acquire it again before extending it.`: a release the
 * caller never made, of a key that was not the one lost, and not a `LockLostError`, so that code
 * (and the HTTP interceptor: 503 for a loss) that handles a loss by its class missed it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { memoryStore, redisStore } from './stealable-stores.js';

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
      await new Promise((resolve) => (lock.signal.aborted ? resolve(undefined) : lock.signal.addEventListener('abort', resolve, { once: true })));
      expect(lock.signal.reason).toMatchObject({ reason: 'refused', key: lost });
      const extended = await lock.extend().then(() => 'resolved', (error: unknown) => error);
      expect(extended).toBeInstanceOf(LockLostError);
      expect(extended).toBe(lock.signal.reason);
      await lock.release();
    });
  }
});
