/**
 * Found by review (thirty-seventh session). The lock metrics are recorded from the lock events,
 * which come per key: a multi-key lock (`acquire([...keys])`, `@Locked([...])`) was counted
 * once per key. One call, one lock handle, one `release()`, yet:
 * - `lock.active` read 2 while the application held one two-key lock;
 * - a `tryAcquire([a, b])` that found `b` busy recorded one `acquired` (its `a`, given back at
 *   once) and one `busy` in `lock.acquire.duration`: a call that got nothing counted as a success,
 *   so a success ratio by `lock.name` read 50% where it was 0%, and `lock.hold.duration` got a
 *   hold of a key the application never had;
 * - an `acquire([a, b])` whose wait ran out on `b` recorded `acquired` and `timeout`;
 * - a lock lost through one key's refused renewal recorded two holds.
 * lib/otel/lock-metrics.ts counts every `acquired`, `not-acquired`, `released` and `lost` event.
 * Now a multi-key lock is one lock to the metrics, as docs/observability.md says: one outcome per
 * call, one lock in `lock.active`, one hold, one loss; its keys' events (per key, as the board
 * and `events$` show them) carry `keys`.
 */
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError, type LockEvent } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('lock metrics of a multi-key lock', () => {
  const redis = useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const { points } = lockMetrics;
  const gauge = async (name: string): Promise<number> => (await points(name)).find((point) => point.attributes['lock.name'] === 'pair')?.value ?? 0;
  async function results(): Promise<Record<string, number>> {
    const acquire = await points<Histogram>('lock.acquire.duration');
    return Object.fromEntries(acquire.filter((point) => point.attributes['lock.name'] === 'pair').map((point) => [point.attributes['lock.result'], point.value.count]));
  }
  const holds = async (): Promise<number> => (await points<Histogram>('lock.hold.duration')).find((point) => point.attributes['lock.name'] === 'pair')?.value.count ?? 0;
  const losses = async (): Promise<number> => (await points('lock.lost')).find((point) => point.attributes['lock.name'] === 'pair')?.value ?? 0;

  it('counts one lock, one outcome per call, one hold and one loss, however many keys', async () => {
    lockMetrics.enable();
    const { locks } = await app();
    const other = await app();
    const events: LockEvent[] = [];
    const feed = locks.events$.subscribe((event) => events.push(event));

    // Held: one lock, one acquisition.
    const pair = await locks.acquire(['m:a', 'm:b'], { name: 'pair', ttl: 2_000 });
    expect(await gauge('lock.active')).toBe(1);
    expect(await results()).toEqual({ acquired: 1 });
    // Its keys' own events stay per key, and say whose lock they are.
    expect(events.filter((event) => event.type === 'acquired').map((event) => [event.key, event.keys])).toEqual([
      ['m:a', ['m:a', 'm:b']],
      ['m:b', ['m:a', 'm:b']],
    ]);
    await pair.release();
    expect(await gauge('lock.active')).toBe(0);
    expect(await holds()).toBe(1);

    // tryAcquire() that finds its second key busy: one 'busy', no 'acquired', no hold.
    const busy = await other.locks.acquire('m:b', { ttl: 2_000 });
    expect(await locks.tryAcquire(['m:a', 'm:b'], { name: 'pair' })).toBeNull();
    expect(await results()).toEqual({ acquired: 1, busy: 1 });
    expect(await holds()).toBe(1);
    expect(await gauge('lock.active')).toBe(0);

    // acquire() whose wait runs out on its second key, after taking the first: one 'timeout'.
    await expect(locks.acquire(['m:a', 'm:b'], { name: 'pair', waitTimeout: 50 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await results()).toEqual({ acquired: 1, busy: 1, timeout: 1 });
    expect(await holds()).toBe(1);
    expect(await gauge('lock.active')).toBe(0);
    expect(await gauge('lock.waiting')).toBe(0);
    await busy.release();

    // Lost through one key (its renewal refused): one loss, one hold, the gauge back to 0.
    const lost = await locks.acquire(['m:a', 'm:b'], { name: 'pair', ttl: 2_000 });
    expect(await gauge('lock.active')).toBe(1);
    await redis.del('lock:{m:a}');
    await expect(lost.extend()).rejects.toBeInstanceOf(LockLostError);
    await expect.poll(() => lost.signal.aborted).toBe(true);
    await lost.release().catch(() => undefined);
    expect(await losses()).toBe(1);
    expect(await holds()).toBe(2);
    expect(await gauge('lock.active')).toBe(0);
    expect(await results()).toEqual({ acquired: 2, busy: 1, timeout: 1 });
    feed.unsubscribe();

    // Still held at shutdown: one loss ('shutdown'), not one per key.
    const { locks: closing, close } = await app();
    await closing.acquire(['m:a', 'm:b'], { name: 'pair', ttl: 2_000 });
    expect(await gauge('lock.active')).toBe(1);
    await close();
    expect((await points('lock.lost')).filter((point) => point.attributes['lock.name'] === 'pair').map((point) => [point.attributes['lock.lost.reason'], point.value])).toEqual([
      ['refused', 1],
      ['shutdown', 1],
    ]);
    expect(await gauge('lock.active')).toBe(0);
    expect(await holds()).toBe(3);
  });
});
