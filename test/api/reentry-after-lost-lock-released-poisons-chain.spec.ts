/**
 * Defect: code that a `using()` callback started, and that runs after that `using()` ended, can
 * never take the callback's key again if the lock had been lost while the callback ran.
 *
 * Promise (LockService.current() TSDoc, docs/locks.md "Reentrancy"): a lock its `using()` or
 * `@Locked` call has released is over for code the chain started that runs afterwards (a timer, a
 * promise nobody awaited): `current()` is `undefined` there, and an acquisition of the key from
 * there is a fresh one (test/reentrancy.spec.ts "takes the lock anew in Redis when the outer
 * holder released it early"). Only while the outer holder is still running with a lost lock must
 * a nested acquisition fail fast ("the whole chain is working without it").
 *
 * What happens: `LockManager.reenter()` (lib/core/engine/lock-manager.ts, the `findLast` in
 * `reenter`) looks up the chain's lock for the key without skipping locks that are over
 * (`released`), unlike `current()`. A lock that was lost and then given back by its `using()`
 * stays in the chain's AsyncLocalStorage store for ever, its signal aborted, so every later
 * `acquire`/`using`/`@Locked` of that key from any code the callback started (a `setInterval`, a
 * cache refresher or a listener created lazily inside the locked section) rejects with the old
 * `LockLostError`, without ever asking Redis, while the key is free.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('code started inside using() that runs after it ended', () => {
  const redis = useRedis();
  let app: LockApp;
  afterEach(() => app?.close());

  it('takes the key anew after a normal release (the documented behaviour, for contrast)', async () => {
    app = await createLockApp({ waitTimeout: 2_000 });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let later!: Promise<unknown>;
    let first = 0;
    await app.locks.using('k', (lock) => {
      first = lock.fencingToken;
      later = gate.then(() => app.locks.using('k', (again) => again.fencingToken));
    });
    open();
    await expect(later).resolves.toBe(first + 1);
  });

  it('takes the key anew after the using() whose lock was lost has ended', async () => {
    app = await createLockApp({ waitTimeout: 2_000 });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let later!: Promise<unknown>;
    let lost: unknown;
    let first = 0;
    await app.locks.using('k', async (lock) => {
      first = lock.fencingToken;
      // Work the locked section starts and that outlives it (a continuation, a timer, a listener).
      later = gate.then(() => app.locks.using('k', (again) => again.fencingToken));
      // The lock is taken from us (evicted, released by force): the renewal is refused.
      await redis.del('lock:{k}');
      lost = await lock.extend().catch((e: unknown) => e);
      expect(lock.held).toBe(false);
    });
    expect(lost).toBeInstanceOf(LockLostError);
    // The using() is over and has given its lock back; nobody holds 'k'.
    expect(await redis.exists('lock:{k}')).toBe(0);
    expect(app.locks.current('k')).toBeUndefined();
    open();
    // A fresh acquisition, as after a normal release: the next fencing token.
    await expect(later).resolves.toBe(first + 1);
  });
});
