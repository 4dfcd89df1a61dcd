/**
 * Found by review of 555231cb. The recorder counts `lock.active` and `lock.waiting` down only for
 * what it counted up (a lock taken before it started does not take the gauge below what it
 * holds). A meter whose up-down counter throws on one `add()` (an SDK or wrapper failing for a
 * while, then recording again) cost that count up, but the recorder had paired the lock or the
 * wait already: its end counted down what was never counted up, and the gauge read one less than
 * the locks held (-1 with none) for the process's life. A count up the meter refused is now not
 * paired, so its end counts nothing down, as for a lock taken before the recorder started.
 */
import type { Meter, MeterProvider as ApiMeterProvider, UpDownCounter } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { nextEvent, useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('an up-down counter that throws on one add()', () => {
  useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const value = (name: string, lockName: string) => lockMetrics.value(name, { 'lock.name': lockName });

  /** The test's provider, whose up-down counters throw on their first add() only. */
  function throwingOnce(): ApiMeterProvider {
    const real = lockMetrics.provider;
    return {
      getMeter: (...args: Parameters<ApiMeterProvider['getMeter']>): Meter => {
        const meter = real.getMeter(...args);
        return new Proxy(meter, {
          get: (target, property, receiver) => {
            if (property !== 'createUpDownCounter') return Reflect.get(target, property, receiver);
            return (...made: Parameters<Meter['createUpDownCounter']>): UpDownCounter => {
              const counter = target.createUpDownCounter(...made);
              let calls = 0;
              return {
                add: (...added: Parameters<UpDownCounter['add']>) => {
                  if (calls++ === 0) throw new Error('meter busy');
                  counter.add(...added);
                },
              };
            };
          },
        });
      },
    };
  }

  it('lock.active: the lock whose count up was refused counts nothing down', async () => {
    const { locks } = await app();
    lockMetrics.enable({ meterProvider: throwingOnce() });
    const first = await locks.acquire('refused-up', { name: 'report' });
    await first.release();
    // Before: -1, though no lock is held.
    expect((await value('lock.active', 'report')) ?? 0).toBe(0);
    const second = await locks.acquire('refused-up', { name: 'report' });
    expect(await value('lock.active', 'report')).toBe(1);
    await second.release();
    expect(await value('lock.active', 'report')).toBe(0);
  });

  it('lock.waiting: the wait whose count up was refused counts nothing down', async () => {
    const holder = await app();
    const waiter = await app();
    lockMetrics.enable({ meterProvider: throwingOnce() });
    const held = await holder.locks.acquire('refused-wait');
    const announced = nextEvent(waiter.locks.events$, 'waiting');
    const waiting = waiter.locks.acquire('refused-wait', { name: 'order', waitTimeout: 10_000 });
    await announced;
    await held.release();
    const taken = await waiting;
    await taken.release();
    // Before: -1, though nobody waits.
    expect((await value('lock.waiting', 'order')) ?? 0).toBe(0);
  });
});
