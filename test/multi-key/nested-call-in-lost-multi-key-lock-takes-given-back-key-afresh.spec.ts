/**
 * Found by review (thirty-second session, read-write and multi-key locks). Since d5411c0 a
 * multi-key lock lost because one key is gone from Redis gives its other keys back at once. Its
 * call chain goes on, and a nested `using()` (or `@Locked`, `tryAcquire`) of one of those other
 * keys then no longer re-enters (docs/lock-family.md: "nested `using(key)` of any of the keys
 * re-enters") nor fails with the loss, as a nested call of the lost key and of a lost single-key
 * lock do (LockManager.reenter: "the whole chain is working without it"): the given-back part is
 * skipped as released, and the key is taken afresh from Redis, with a new fencing token, inside
 * code whose lock is lost. A transfer's nested `@Locked('account:<0>')` credit of the other
 * account so ran to the end after the transfer's lock was lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { memoryStore, redisStore } from './stealable-stores.js';

describe('a nested call of another key of a multi-key lock lost to one key', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  for (const make of [redisStore, memoryStore]) {
    it(`fails with the lock's loss instead of taking the key afresh (${make().label})`, { timeout: 20_000 }, async () => {
      const store = make();
      cleanups.push(() => store.done());
      const app = await store.open();
      cleanups.push(() => app.close());
      const { locks } = app;
      const [lost, other] = [`nested-lost:${store.label}:a`, `nested-lost:${store.label}:b`];
      let loss: unknown;
      const outcome = await locks.using([lost, other], async (lock) => {
        await store.steal(lost);
        await new Promise((resolve) => (lock.signal.aborted ? resolve(undefined) : lock.signal.addEventListener('abort', resolve, { once: true })));
        loss = lock.signal.reason;
        expect(loss).toMatchObject({ reason: 'refused' });
        // The lost key's nested call fails with the loss, as it does under a single-key lock.
        await expect(locks.using(lost, () => 'ran')).rejects.toBe(lock.signal.reason);
        // So must the other key's: the chain's lock of it is lost with the whole lock.
        return locks.using(other, (inner) => `ran under a fresh lock of the key (token ${inner.fencingToken})`).catch((error: unknown) => error);
      });
      expect(outcome).toBeInstanceOf(LockLostError);
      expect(outcome).toBe(loss);
      // Nothing was taken afresh: the other key is free.
      expect(await locks.isLocked(other)).toBe(false);
    });
  }
});
