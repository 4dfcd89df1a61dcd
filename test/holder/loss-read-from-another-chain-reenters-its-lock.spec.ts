/**
 * A lock's loss is told through its signal, whose listeners run where the loss is noticed.
 * DeadlineSweeper runs its timer outside any call chain for that reason ("a loss told from a
 * sweep would hand that chain to the code it wakes (an election's retry re-entering a lost
 * lease, say)"). But a loss noticed by reading `held` (HeldLock.expireIfPast, also through
 * leaseLive: LeadershipService.isLeader(), current(), stillHeld) is told inside the chain of
 * whoever read it. After a stall past the lease, a request holding lock 'a' that checks a
 * background lock (`worker.lock.held`, `leadership.isLeader(key)`) runs that lock's abort
 * listeners in its own chain: code they start that takes 'a' re-enters the request's lock
 * instead of waiting for it, and runs beside the request under one lease.
 */
import { filter } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';

describe("a loss noticed by reading another chain's lock", () => {
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  // The signal's listeners, and (found by review of the first fix, which moved the signal only)
  // an events$ subscriber to `lost`, the documented way to react to a loss.
  it.each(['signal listener', 'events$ subscriber'] as const)("does not hand the reader's chain to the lost lock's %s", { timeout: 20_000 }, async (teller) => {
    app = await createLockApp({ ttl: 5_000 });
    const { locks } = app;
    // A background task's lock, taken outside any chain, with a clean-up under 'a' on its loss.
    const background = await locks.acquire('bg:task', { ttl: 300 });
    let requestInside = false;
    const cleanup: { ran: boolean; overlapped: boolean; reentered: boolean } = { ran: false, overlapped: false, reentered: false };
    let cleanupDone!: Promise<unknown>;
    const cleanUp = (): void => {
      cleanupDone = locks.using('shared:a', async (lock) => {
        cleanup.ran = true;
        cleanup.overlapped = requestInside;
        cleanup.reentered = lock.constructor.name === 'ReentrantLock';
      });
    };
    const subscription =
      teller === 'signal listener'
        ? (background.signal.addEventListener('abort', cleanUp, { once: true }), undefined)
        : locks.events$.pipe(filter((event) => event.type === 'lost' && event.key === 'bg:task')).subscribe(cleanUp);
    // A request holding 'a' stalls past the background lock's lease, then checks that lock.
    await locks.using('shared:a', async () => {
      requestInside = true;
      const until = performance.now() + 600;
      while (performance.now() < until);
      expect(background.held).toBe(false);
      await sleep(100);
      requestInside = false;
    });
    await cleanupDone;
    subscription?.unsubscribe();
    expect(cleanup).toEqual({ ran: true, overlapped: false, reentered: false });
  });

  it('(control) told by the deadline sweeper, the clean-up waits for the request', { timeout: 20_000 }, async () => {
    app = await createLockApp({ ttl: 5_000 });
    const { locks } = app;
    const background = await locks.acquire('bg:task', { ttl: 300 });
    let requestInside = false;
    const cleanup: { ran: boolean; overlapped: boolean; reentered: boolean } = { ran: false, overlapped: false, reentered: false };
    let cleanupDone!: Promise<unknown>;
    background.signal.addEventListener('abort', () => {
      cleanupDone = locks.using('shared:a', async (lock) => {
        cleanup.ran = true;
        cleanup.overlapped = requestInside;
        cleanup.reentered = lock.constructor.name === 'ReentrantLock';
      });
    }, { once: true });
    await locks.using('shared:a', async () => {
      requestInside = true;
      const until = performance.now() + 600;
      while (performance.now() < until);
      await sleep(100);
      requestInside = false;
    });
    await cleanupDone;
    expect(cleanup).toEqual({ ran: true, overlapped: false, reentered: false });
  });
});
