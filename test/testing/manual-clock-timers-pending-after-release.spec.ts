import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { useTestingApps } from '../support/testing-apps.js';

// Review (testing module). docs/testing.md: "`manualClock.pendingTimers` counts the timers of
// leases, renewals, waits and retries: an application that holds and waits for nothing has none".
// Once its last lock was released, or its last wait ended, an application still had one or two:
// the deadline sweeper keeps its one timer armed when its heap empties (an unref'd Node timer on
// the system clock, left armed so that taking and releasing locks in a loop does not reset it),
// and the watchdog's group of a renewal interval outlives its last lock by two ticks. On the
// manual clock those are timers of the test's own: a test asserting that the code it runs left
// nothing pending (a lock forgotten unreleased, a wait still running) failed after correct code,
// and stayed failed until it advanced past the lingering timers (which then fired to do nothing).
describe('manualClock.pendingTimers once the application holds and waits for nothing', () => {
  const open = useTestingApps();

  it.each([
    ['renewed', { autoRenew: true }],
    ['not renewed', { autoRenew: false }],
  ])('is 0 after a %s lock is released', async (_name, options) => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const locks = await open(store, { ttl: '30s' });
    expect(store.manualClock.pendingTimers).toBe(0);
    const lock = await locks.acquire('pending:released', options);
    expect(store.manualClock.pendingTimers).toBeGreaterThan(0);
    await lock.release();
    // Failed: 2 renewed (the sweeper's timer of the release's reply wait, the watchdog's group), 1 not.
    expect(store.manualClock.pendingTimers).toBe(0);
  });

  it.each([
    ['a semaphore permit', { limit: 2 }],
    ['a read lock', { mode: 'read' }],
  ] as const)('is 0 after %s is released', async (_name, options) => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const locks = await open(store, { ttl: '30s' });
    const lock = await locks.acquire('pending:kinds', options);
    await lock.release();
    expect(store.manualClock.pendingTimers).toBe(0);
  });

  it('is 0 after a multi-key lock is released', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const locks = await open(store, { ttl: '30s' });
    const lock = await locks.acquire(['pending:one', 'pending:two']);
    await lock.release();
    expect(store.manualClock.pendingTimers).toBe(0);
  });

  it('is 0 after a wait ran out and the holder released, and the next lock arms them again', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const holder = await open(store, { ttl: '30s' });
    const waiter = await open(store, { ttl: '30s' });
    const held = await holder.acquire('pending:waited');
    const outcome = waiter.acquire('pending:waited', { waitTimeout: '5s' }).then(
      () => 'acquired',
      (error: unknown) => error,
    );
    await store.manualClock.advance('6s');
    expect(await outcome).toBeInstanceOf(LockNotAcquiredError);
    await held.release();
    // Failed: 2.
    expect(store.manualClock.pendingTimers).toBe(0);
    // The watchdog and the lease still run for the next lock: renewed past its ttl, then lost once taken away.
    const next = await waiter.acquire('pending:waited');
    await store.manualClock.advance('1m');
    expect(next.signal.aborted).toBe(false);
    store.delete('pending:waited');
    await store.manualClock.advance('30s');
    expect(next.signal.aborted).toBe(true);
    await next.release().catch(() => undefined);
    expect(store.manualClock.pendingTimers).toBe(0);
  });
});
