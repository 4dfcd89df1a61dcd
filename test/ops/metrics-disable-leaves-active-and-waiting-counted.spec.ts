/**
 * Defect: `handle.disable()` (or the last `RedisLockMetricsModule` of the process shutting down
 * while another keeps its LockService) stops the recorder while locks it counted are still held
 * and callers it counted still wait. Their release (or acquisition) is then never recorded, and
 * the SDK, which keeps exporting an up-down counter's last cumulative value, reports
 * `lock.active` 1 and `lock.waiting` 1 for the rest of the process, with no lock held and no one
 * waiting; enabled again, the new recorder cannot count them down either.
 *
 * Now `disable()` takes back what the recorder counted up and never down: both read 0.
 */
import { describe, expect, it } from 'vitest';
import { nextEvent, useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('lock metrics disabled while locks are held and callers wait', () => {
  const lockMetrics = useLockMetrics();
  const value = (name: string, lockName: string) => lockMetrics.value(name, { 'lock.name': lockName });
  const app = useLockApps();
  useRedis();

  it('leaves lock.active and lock.waiting at zero, not at what was held and waited then', async () => {
    const holder = await app();
    const waiter = await app();
    const handle = lockMetrics.enable();
    const held = await holder.locks.acquire('order:1', { name: 'order' });
    const announced = nextEvent(waiter.locks.events$, 'waiting');
    const waiting = waiter.locks.acquire('order:1', { name: 'order', waitTimeout: 10_000 });
    await announced;
    expect(await value('lock.active', 'order')).toBe(1);
    expect(await value('lock.waiting', 'order')).toBe(1);

    handle.disable();
    expect(await value('lock.active', 'order')).toBe(0);
    expect(await value('lock.waiting', 'order')).toBe(0);

    // Nor do the lock and the wait, ending unrecorded, leave anything behind once enabled again.
    lockMetrics.enable();
    await held.release();
    await (await waiting).release();
    expect(await value('lock.active', 'order')).toBe(0);
    expect(await value('lock.waiting', 'order')).toBe(0);
  });

  it('takes back a multi-key lock once', async () => {
    const { locks } = await app();
    const handle = lockMetrics.enable();
    const lock = await locks.acquire(['a', 'b'], { name: 'pair' });
    expect(await value('lock.active', 'pair')).toBe(1);
    handle.disable();
    expect(await value('lock.active', 'pair')).toBe(0);
    await lock.release();
  });
});
