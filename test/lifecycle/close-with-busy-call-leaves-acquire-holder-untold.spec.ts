/**
 * Found by review of c684375: docs/configuration.md ("Shutdown") says that in beforeApplicationShutdown the
 * module "aborts the signal of every holder with LockLostError reason shutdown", keeps the locks of
 * using()/@Locked calls still running until they end (two thirds of shutdownTimeout at most), and
 * "then gives every held lock back (a lock from acquire() at once: the module cannot know when its
 * holder is done)". Since c684375, LockManager.giveBackAll() interrupts only the locks of running
 * calls (`busy`) and waits for those calls before it calls shutdown() on any lock: while one call
 * winds down, a lock taken with acquire() (a worker loop's, `while (!lock.signal.aborted)`) is
 * neither told (its signal stays unaborted) nor given back, for up to two thirds of shutdownTimeout.
 */
import { describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('app.close() while a using() call winds down and another lock is held by acquire()', () => {
  const own = useOwnRedis();

  it('aborts the acquire() holder\'s signal (reason shutdown) when it aborts the call\'s', { timeout: 20_000 }, async () => {
    const a = await createLockApp({ redis: own.url(), shutdownTimeout: 6_000 });
    const worker = await a.locks.acquire('s28-untold:worker');
    let endWork!: () => void;
    let callSignal!: AbortSignal;
    const work = a.locks.using('s28-untold:call', (lock) => {
      callSignal = lock.signal;
      return new Promise<void>((resolve) => (endWork = resolve));
    });
    await expect.poll(() => callSignal !== undefined).toBe(true);
    const closing = a.close();
    // The close has begun: the running call is told.
    await expect.poll(() => callSignal.aborted).toBe(true);
    const told = { aborted: worker.signal.aborted, shutdown: worker.signal.reason instanceof LockLostError && worker.signal.reason.reason === 'shutdown' };
    endWork();
    await work;
    await closing;
    // Fails: { aborted: false, shutdown: false } — told only once the call ended (or 2/3 shutdownTimeout passed).
    expect(told).toEqual({ aborted: true, shutdown: true });
  });
});
