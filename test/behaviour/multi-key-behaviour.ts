import { describe, expect, it } from 'vitest';
import { LockKeyError, LockLostError, LockNotAcquiredError, RedisUnavailableError } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { useBackend, type LockBackend } from './lock-behaviour.js';

/**
 * A `tryAcquire()`'s answer, granted or busy, however long Redis takes: asked again while it
 * rejects with `RedisUnavailableError` (neither granted nor busy). In quorum mode a round the
 * masters leave unanswered within its 500 ms rejects so, which a loaded machine brings about
 * (reproduced by stopping two masters of three for 700 ms as the call asks: "Quorum not reached
 * ... node 0: no answer within 500 ms; node 1: no answer within 500 ms"), as the one-key quorum
 * case of a node restarted empty asks again (da3d534d). One master out changes nothing.
 */
async function answered<T>(call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
    }
  }
}

/** Locks over several keys (`acquire([...])`), through the public API, on every backend. */
export function describeMultiKeyBehaviour(label: string, backend: LockBackend): void {
  describe(`multi-key behaviour: ${label}`, () => {
    const { open, key } = useBackend(backend, 'multi');

    it('takes every key, in canonical order, with a fencing token per key, and gives them all back', async () => {
      const { locks } = await open();
      const [a, b, c] = [key('a'), key('b'), key('c')];
      const lock = await locks.acquire([c, a, b, a]);
      expect(lock.keys).toEqual([a, b, c]);
      expect(lock.key).toBe(a);
      expect(Object.keys(lock.fencingTokens).sort()).toEqual([a, b, c]);
      expect(lock.fencingToken).toBe(lock.fencingTokens[a]);
      expect(lock.held).toBe(true);
      for (const k of [a, b, c]) expect(await locks.isLocked(k)).toBe(true);
      await lock.release();
      expect(lock.held).toBe(false);
      for (const k of [a, b, c]) expect(await locks.isLocked(k)).toBe(false);
    });

    it('is all or nothing: when one key stays busy, what was taken is given back', async () => {
      const holder = await open();
      const { locks } = await open();
      const [a, b] = [key('a'), key('b')];
      const busy = await holder.locks.acquire(b);
      // Long enough that, in quorum mode, a round the masters left unanswered within its 500 ms (a
      // loaded machine) is asked again before the wait ends: with 300 ms, a's round unanswered
      // ended the call on a (LockNotAcquiredError for a, Redis' silence as its cause), not on b.
      const error = await locks.acquire([a, b], { waitTimeout: 2_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      expect((error as LockNotAcquiredError).key).toBe(b);
      expect(await locks.isLocked(a)).toBe(false);
      expect(await answered(() => locks.tryAcquire([a, b]))).toBeNull();
      expect(await locks.isLocked(a)).toBe(false);
      await busy.release();
      const both = await answered(() => locks.tryAcquire([b, a]));
      expect(both?.keys).toEqual([a, b]);
      await both!.release();
    });

    it('never deadlocks when callers name overlapping keys in opposite orders', { timeout: 60_000 }, async () => {
      const instances = await Promise.all([open(), open(), open()]);
      const [x, y, z] = [key('x'), key('y'), key('z')];
      const orders = [[x, y], [y, x], [z, y, x]];
      let inside = 0;
      let overlaps = 0;
      let done = 0;
      await Promise.all(
        instances.map(({ locks }, i) =>
          (async () => {
            for (let n = 0; n < 10; n++) {
              await locks.using(
                orders[i]!,
                async () => {
                  if (++inside > 1) overlaps++;
                  await sleep(2);
                  inside--;
                },
                { waitTimeout: 30_000 },
              );
              done++;
            }
          })(),
        ),
      );
      expect(done).toBe(30);
      expect(overlaps).toBe(0);
    });

    it('re-enters each key in the call chain, and current() is the whole lock', async () => {
      const { locks } = await open();
      const [a, b] = [key('a'), key('b')];
      await locks.using([b, a], async (lock) => {
        expect(locks.current()).toBe(lock);
        expect(locks.current(b)?.fencingToken).toBe(lock.fencingTokens[b]);
        const nested = await locks.using(a, async (inner) => inner.fencingToken, { waitTimeout: 0 });
        expect(nested).toBe(lock.fencingTokens[a]);
      });
      expect(await locks.isLocked(a)).toBe(false);
    });

    it('aborts the signal when any one key is lost', async () => {
      const { locks } = await open({ ttl: 600 });
      const [a, b] = [key('a'), key('b')];
      const lock = await locks.acquire([a, b]);
      await backend.steal(b);
      await new Promise((resolve) => (lock.signal.aborted ? resolve(undefined) : lock.signal.addEventListener('abort', resolve, { once: true })));
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect((lock.signal.reason as LockLostError).key).toBe(b);
      expect(lock.held).toBe(false);
      await lock.release();
      expect(await locks.isLocked(a)).toBe(false);
    });

    it('names the argument in errors for bad key lists', async () => {
      const { locks } = await open();
      await expect(locks.acquire([])).rejects.toThrow(LockKeyError);
      await expect(locks.acquire([key('a'), 42 as unknown as string])).rejects.toThrow(/keys\[1\]/);
      await expect(locks.using([''], () => 1)).rejects.toThrow(/keys\[0\]/);
    });
  });
}
