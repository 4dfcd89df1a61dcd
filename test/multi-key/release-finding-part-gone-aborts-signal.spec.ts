/**
 * Found by review of the multi-key layer. A single key's `release()` that finds its key gone from
 * Redis (deleted, evicted, released by force between two renewals) aborts the lock's `signal`
 * with a `LockLostError` (`refused`): the work it guarded ran without the lock for a while, and
 * whatever still listens to the signal (work handed off, a stream) hears so. A multi-key lock
 * one of whose keys its `release()` found gone left its `signal` unaborted: it stopped watching
 * its parts before releasing them. It aborts now, with that part's loss, on both stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { memoryStore, redisStore } from './stealable-stores.js';

describe('a multi-key lock whose release() finds a key gone', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  for (const [label, make] of [['redis', redisStore], ['memory', memoryStore]] as const) {
    it(`aborts its signal with that key's loss (refused), as one key's lock does (${label})`, async () => {
      const store = make();
      cleanups.push(() => store.done());
      const app = await store.open();
      cleanups.push(() => app.close());

      const one = await app.locks.acquire(`gone-at-release:${label}:one`);
      await store.steal(`gone-at-release:${label}:one`);
      await one.release();
      expect((one.signal.reason as LockLostError).reason).toBe('refused');

      // Released at once, before any renewal could find the key gone: the release finds it.
      const pair = await app.locks.acquire([`gone-at-release:${label}:a`, `gone-at-release:${label}:b`]);
      await store.steal(`gone-at-release:${label}:b`);
      await pair.release();
      expect(pair.signal.aborted).toBe(true);
      const loss = pair.signal.reason as LockLostError;
      expect(loss).toBeInstanceOf(LockLostError);
      expect(loss.reason).toBe('refused');
      expect(loss.key).toBe(`gone-at-release:${label}:b`);
    });
  }
});
