/**
 * Defect: `lock.active` (and `lock.waiting`) go negative when metrics are enabled while locks are
 * already held (or callers already wait): the release (or the acquisition after the wait) is
 * recorded as a decrement for an increment that was never recorded.
 *
 * Promise (docs/observability.md, "Metrics"; lib/otel/lock-metrics.ts TSDoc): `lock.active` is
 * an up-down counter of the "Locks held by this process", `lock.waiting` of the "Callers waiting
 * for a busy lock"; `enableLockMetrics()` may be called at any time (`const handle =
 * enableLockMetrics(); ... handle.disable();`). The lock event docs even promise the pairing:
 * `afterWaiting` is "Whether a `waiting` event was emitted for this call before"
 * (lock-event.interface.ts), i.e. a decrement must pair with an increment someone saw.
 *
 * What happens: the engine emits `acquired` only while someone listens (lock-manager.ts:749) but
 * emits `released` for every held lock once someone listens (held-lock.ts:343); the recorder
 * (lock-metrics.ts:74-91) adds -1 to `lock.active` on every `released`/`lost`. A lock taken before
 * the metrics were enabled (a lock taken in an earlier `onModuleInit`, an election leader, or
 * while an APM subscriber was not yet attached) therefore drives the gauge to -1, and it stays
 * off by one for the process's life. The same happens to `lock.waiting` for a caller that
 * started waiting while only `events$` (the board's live feed) listened: `afterWaiting: true`
 * then decrements a `waiting` the metrics never counted.
 */
import { describe, expect, it } from 'vitest';
import { nextEvent, useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('lock.active and lock.waiting after metrics are enabled late', () => {
  useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const value = (name: string, lockName: string) => lockMetrics.value(name, { 'lock.name': lockName });

  it('never counts fewer than zero locks held', async () => {
    const { locks } = await app();
    // Held before anyone records metrics (e.g. taken in an onModuleInit that ran first).
    const lock = await locks.acquire('report', { name: 'report' });
    lockMetrics.enable();
    await lock.release();
    // The process holds no lock: the gauge must not read -1.
    expect((await value('lock.active', 'report')) ?? 0).toBe(0);
  });

  it('never counts fewer than zero waiting callers', async () => {
    const holder = await app();
    const waiter = await app();
    const held = await holder.locks.acquire('order:1', { name: 'order' });
    // Only the board's live feed (events$) listens while the caller starts waiting.
    const feed = waiter.locks.events$.subscribe();
    const announced = nextEvent(waiter.locks.events$, 'waiting');
    const waiting = waiter.locks.acquire('order:1', { name: 'order', waitTimeout: 10_000 });
    expect(await announced).toMatchObject({ key: 'order:1', name: 'order' });
    lockMetrics.enable();
    await held.release();
    const second = await waiting;
    feed.unsubscribe();
    expect((await value('lock.waiting', 'order')) ?? 0).toBe(0);
    await second.release();
  });
});
