import { channel } from 'node:diagnostics_channel';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { LOCK_DIAGNOSTICS_CHANNELS, Locked, LockService, RedisLockModule, type LockEvent } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LOCK_DURATION_BUCKETS, RedisLockMetricsModule } from '../../lib/otel/index.js';
import { CapturedLogs, useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('OpenTelemetry metrics', () => {
  const redis = useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const { points, value } = lockMetrics;

  it('records acquire and hold durations, active and waiting locks, and losses, by lock name', async () => {
    lockMetrics.enable();
    const holder = await app();
    const waiter = await app();
    const lock = await holder.locks.acquire('order:1', { name: 'order:<id>', ttl: 2_000 });
    const waiting = waiter.locks.acquire('order:1', { name: 'order:<id>', waitTimeout: 10_000 });
    await expect.poll(() => value('lock.waiting', { 'lock.name': 'order:<id>' })).toBe(1);
    expect(await value('lock.active', { 'lock.name': 'order:<id>' })).toBe(1);
    expect(await holder.locks.tryAcquire('order:1', { name: 'order:<id>' })).toBeNull();
    await lock.release();
    const second = await waiting;
    expect(await value('lock.waiting', { 'lock.name': 'order:<id>' })).toBe(0);
    expect(await value('lock.active', { 'lock.name': 'order:<id>' })).toBe(1);
    // Someone deletes the lock behind the holder's back: the next renewal is refused.
    await redis.del('lock:{order:1}');
    await second.extend().catch(() => undefined);
    expect(await value('lock.lost', { 'lock.name': 'order:<id>', 'lock.lost.reason': 'refused' })).toBe(1);
    expect(await value('lock.active', { 'lock.name': 'order:<id>' })).toBe(0);

    const acquire = await points<Histogram>('lock.acquire.duration');
    const byResult = Object.fromEntries(acquire.map((point) => [point.attributes['lock.result'], point.value.count]));
    expect(byResult).toEqual({ acquired: 2, busy: 1 });
    const hold = await points<Histogram>('lock.hold.duration');
    expect(hold[0]!.value.count).toBe(2);
    expect(hold[0]!.value.sum).toBeGreaterThan(0);
    expect(hold[0]!.value.sum).toBeLessThan(60); // seconds, not milliseconds
    // The raw key never becomes an attribute value.
    for (const name of ['lock.acquire.duration', 'lock.hold.duration', 'lock.active', 'lock.waiting', 'lock.lost']) {
      for (const point of await points(name)) expect(Object.values(point.attributes)).not.toContain('order:1');
    }
  });

  it('labels timeouts and Redis errors, and names @Locked locks by their template', async () => {
    @Injectable()
    class Jobs {
      @Locked('job:<0>', { waitTimeout: 0 })
      async run(_id: string) {
        return 'ran';
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl() }), RedisLockMetricsModule.forRoot({ meterProvider: lockMetrics.provider })],
      providers: [Jobs],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      expect(await moduleRef.get(Jobs).run('42')).toBe('ran');
      const locks = moduleRef.get(LockService);
      const held = await locks.acquire('t', { name: 't' });
      await expect(locks.acquire('t', { name: 't', waitTimeout: 1_000 })).rejects.toThrow();
      await held.release();
      const broken = await app({ redis: 'redis://127.0.0.1:1', waitTimeout: 200 });
      await expect(broken.locks.acquire('e', { name: 'e' })).rejects.toThrow();
      expect(await value('lock.acquire.duration', { 'lock.name': 'job:<0>', 'lock.result': 'acquired' })).toMatchObject({ count: 1 });
      expect(await value('lock.acquire.duration', { 'lock.name': 't', 'lock.result': 'timeout' })).toMatchObject({ count: 1 });
      // All of e's outcomes, so that a wrong one shows in the failure.
      const outcomes = async (name: string) =>
        Object.fromEntries((await points<Histogram>('lock.acquire.duration')).filter((point) => point.attributes['lock.name'] === name).map((point) => [point.attributes['lock.result'], point.value.count]));
      await expect.poll(() => outcomes('e')).toEqual({ error: 1 });
    } finally {
      await moduleRef.close();
    }
    // The module stops recording at shutdown.
    const { locks } = await app();
    await (await locks.acquire('after', { name: 'after' })).release();
    expect(await value('lock.acquire.duration', { 'lock.name': 'after' })).toBeUndefined();
  });

  it('buckets durations in seconds, from sub-millisecond to minutes, with the real SDK', async () => {
    lockMetrics.enable();
    // Known durations, published as the lock engine publishes them.
    const at = Date.now();
    const publish = (event: LockEvent) => channel(LOCK_DIAGNOSTICS_CHANNELS[event.type]).publish(event);
    publish({ type: 'acquired', key: 'b', name: 'b', fencingToken: 1, waitedMs: 0.3, afterWaiting: false, at });
    publish({ type: 'acquired', key: 'b', name: 'b', fencingToken: 2, waitedMs: 300, afterWaiting: false, at });
    publish({ type: 'released', key: 'b', name: 'b', fencingToken: 1, heldMs: 7, at });
    publish({ type: 'released', key: 'b', name: 'b', fencingToken: 2, heldMs: 90_000, at });
    // And one real acquisition, which waits for nothing: well under a second.
    const { locks } = await app();
    await (await locks.acquire('real', { name: 'real' })).release();

    /** The upper boundary of the bucket each recorded value fell in (Infinity: the overflow bucket). */
    const landed = async (instrument: string, name: string) => {
      const point = (await points<Histogram>(instrument)).find((each) => each.attributes['lock.name'] === name)!;
      expect(point.value.buckets.boundaries).toEqual([...LOCK_DURATION_BUCKETS]);
      return point.value.buckets.counts.flatMap((count, i) => Array<number>(count).fill(point.value.buckets.boundaries[i] ?? Infinity));
    };
    expect(LOCK_DURATION_BUCKETS[0]).toBeLessThan(0.001);
    expect(LOCK_DURATION_BUCKETS.at(-1)).toBeGreaterThanOrEqual(300);
    expect(await landed('lock.acquire.duration', 'b')).toEqual([0.0005, 0.5]);
    expect(await landed('lock.hold.duration', 'b')).toEqual([0.01, 120]);
    const [real] = await landed('lock.acquire.duration', 'real');
    expect(real).toBeLessThanOrEqual(1);
    expect((await landed('lock.hold.duration', 'real'))[0]).toBeLessThanOrEqual(1);
  });

  it('subscribes to nothing without a registered meter provider', async () => {
    lockMetrics.enable({});
    const { locks } = await app();
    expect((locks[LOCK_RUNNER] as LockManager).listening).toBe(false);
  });
});
