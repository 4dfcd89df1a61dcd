/**
 * Defect: a lock a release handed over to a waiting caller reported a hold that began at the
 * waiter's last attempt, before it got the lock: `heldMs` of its `released` (and `lost`) event,
 * and so `lock.hold.duration`, counted the end of the wait a second time (up to a waiter's
 * refresh, 250 ms, besides `waitedMs`). A waiter that released at once read as having held the
 * lock for most of a quarter second.
 *
 * Promise (lock-event.interface.ts, docs/observability.md): `waitedMs` is the "time from the
 * call to the acquisition", `heldMs` the "time from acquisition to release", and
 * `lock.hold.duration` the "time from acquisition to release or loss".
 *
 * The in-memory store's manual clock moves only when the test moves it: the waiter's last attempt
 * is at 0, the hand-over at 100 ms, its release at the same instant.
 */
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import type { LockEvent } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useTestingApps } from '../support/testing-apps.js';

describe('the hold of a lock handed over to a waiter', () => {
  const open = useTestingApps();
  const lockMetrics = useLockMetrics();

  it('counts from when the waiter got the lock, not from its last attempt', async () => {
    lockMetrics.enable();
    const store = new InMemoryLocks({ clock: 'manual' });
    const [holder, waiter] = [await open(store), await open(store)];
    const events: LockEvent[] = [];
    waiter.events$.subscribe((event) => events.push(event));
    const held = await holder.acquire('report', { name: 'report' });
    const waiting = waiter.acquire('report', { name: 'report', waitTimeout: '10s' });
    await expect.poll(() => events.map((event) => event.type)).toEqual(['waiting']);
    // Less than a waiter's refresh: no attempt of the waiter's in between.
    await store.manualClock.advance(100);
    await held.release();
    const lock = await waiting;
    await lock.release();

    expect(events.find((event) => event.type === 'acquired')).toMatchObject({ waitedMs: 100, afterWaiting: true });
    expect(events.find((event) => event.type === 'released')).toMatchObject({ heldMs: 0 });
    const [hold] = (await lockMetrics.points<Histogram>('lock.hold.duration')).filter((point) => point.value.count === 2);
    // The holder's 100 ms, and the waiter's nothing.
    expect(hold?.value.sum).toBeCloseTo(0.1, 6);
  });
});
