/**
 * Defect: `lock.waiting` is counted down under the wrong `lock.name` when two callers with
 * different names wait on one key and only the second was counted up: the recorder paired waits by
 * key alone, so the first caller's end of wait (begun before metrics were enabled) took the second
 * caller's count, and the second caller's end of wait found nothing left to count down.
 *
 * Promise (docs/observability.md, "Metrics"): `lock.waiting` is an up-down counter of the callers
 * waiting for a busy lock, by `lock.name`; a wait the recorder never saw begin is never counted
 * down (metrics-active-gauge-goes-negative.spec.ts). With both waits over, every name reads 0.
 * Before the fix: `a` read -1 and `b` read 1 for the rest of the process' life.
 */
import { describe, expect, it } from 'vitest';
import { nextEvent, useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('lock.waiting with two names waiting on one key', () => {
  useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const value = (lockName: string) => lockMetrics.value('lock.waiting', { 'lock.name': lockName });

  it('counts each end of wait down under the name whose wait it counted up', async () => {
    const holder = await app();
    const waiters = await app();
    const held = await holder.locks.acquire('order:1', { name: 'holder' });
    // The first caller starts waiting while only the board's live feed (events$) listens.
    const feed = waiters.locks.events$.subscribe();
    const first = nextEvent(waiters.locks.events$, 'waiting');
    const a = waiters.locks.acquire('order:1', { name: 'a', waitTimeout: 10_000 });
    expect(await first).toMatchObject({ name: 'a' });
    lockMetrics.enable();
    const second = nextEvent(waiters.locks.events$, 'waiting');
    const b = waiters.locks.acquire('order:1', { name: 'b', waitTimeout: 10_000 });
    expect(await second).toMatchObject({ name: 'b' });
    expect(await value('b')).toBe(1);

    await held.release();
    await (await a).release();
    await (await b).release();
    feed.unsubscribe();
    expect((await value('a')) ?? 0).toBe(0);
    expect((await value('b')) ?? 0).toBe(0);
  });
});
