/**
 * Defect: `lock.waiting` (and, for locks without a fencing token, `lock.active`) read one less
 * than the callers waiting (the locks held) when a wait (a lock) that began before recording
 * started ended while a later one of the same key and `lock.name` was counted: the recorder paired
 * an end with a beginning by key and name alone, so the uncounted end took the counted one's
 * count, and the gauge read 0 while a caller still waited.
 *
 * Promise (docs/observability.md, "Metrics"): `lock.waiting` counts the "Callers waiting for a
 * busy lock", `lock.active` the "Locks held by this process", and each counts down only what it
 * counted up.
 */
import { describe, expect, it } from 'vitest';
import { nextEvent, useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('a wait or an unfenced lock begun before recording started, ended beside a counted one', () => {
  useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const value = async (name: string, lockName: string) => (await lockMetrics.value(name, { 'lock.name': lockName })) ?? 0;

  it('lock.waiting still counts the later caller after the earlier one got the lock', async () => {
    const holder = await app();
    const waiter = await app();
    const held = await holder.locks.acquire('order:1', { name: 'order' });
    // Only the board's live feed (events$) listens while the first caller starts waiting.
    const feed = waiter.locks.events$.subscribe();
    const firstAnnounced = nextEvent(waiter.locks.events$, 'waiting');
    const first = waiter.locks.acquire('order:1', { name: 'order', waitTimeout: 10_000 });
    await firstAnnounced;
    lockMetrics.enable();
    const secondAnnounced = nextEvent(waiter.locks.events$, 'waiting');
    const second = waiter.locks.acquire('order:1', { name: 'order', waitTimeout: 10_000 });
    await secondAnnounced;
    expect(await value('lock.waiting', 'order')).toBe(1);
    // FIFO: the first caller, whose wait was never counted, gets the lock; the second still waits.
    const acquired = nextEvent(waiter.locks.events$, 'acquired');
    await held.release();
    const firstLock = await first;
    await acquired;
    expect(await value('lock.waiting', 'order')).toBe(1);
    await firstLock.release();
    const secondLock = await second;
    expect(await value('lock.waiting', 'order')).toBe(0);
    await secondLock.release();
    feed.unsubscribe();
  });

  it('lock.active still counts an unfenced semaphore slot taken after recording started when one taken before is released', async () => {
    const { locks } = await app();
    const options = { name: 'export', limit: 2, fencing: false } as const;
    const before = await locks.acquire('export', options);
    lockMetrics.enable();
    const after = await locks.acquire('export', options);
    expect(await value('lock.active', 'export')).toBe(1);
    await before.release();
    // One slot is still held, and was counted.
    expect(await value('lock.active', 'export')).toBe(1);
    await after.release();
    expect(await value('lock.active', 'export')).toBe(0);
  });
});
