import type { MeterProvider } from '@opentelemetry/api';
import { enableLockMetrics, type LockMetricsHandle } from '../../lib/otel/lock-metrics.js';
import type { Lock } from '../../lib/interfaces/lock.interface.js';
import { settleCall, SETTLE_MS } from './settle-call.js';
import type { Instance, World } from './world.js';

/** The probe's key, and its `lock.name`: nobody else calls it. */
const KEY = 'mw';
/** Long enough that no renewal of the holder is due while the probe runs. */
const TTL_MS = 3_000;

/** A meter provider that keeps the up-down counters' sums by instrument and `lock.name` (the rest recorded nowhere). */
function summingProvider(sums: Map<string, number>): MeterProvider {
  const meter = {
    createHistogram: () => ({ record: () => undefined }),
    createCounter: () => ({ add: () => undefined }),
    createUpDownCounter: (instrument: string) => ({
      add: (delta: number, attributes?: Record<string, unknown>) => {
        const id = `${instrument}|${String(attributes?.['lock.name'])}`;
        sums.set(id, (sums.get(id) ?? 0) + delta);
      },
    }),
  };
  return { getMeter: () => meter } as unknown as MeterProvider;
}

/** A waiting call of the probe: its `waiting` event heard, its lock once it got it. */
interface Waiter {
  announced?: true;
  lock?: Lock;
  failed?: true;
}

/**
 * docs/observability.md ("Metrics"): `lock.waiting` counts the callers waiting for a busy lock,
 * and counts down only what it counted up. A wait begun before recording started (lock metrics
 * enabled while the application runs) that ends while a later wait of the same key and
 * `lock.name` is counted must leave that one counted (c9652cc: the recorder paired an end with a
 * beginning by key and name alone, so the uncounted end took the counted one's count, and the
 * gauge read 0 while a caller still waited). The lock metrics' recorder listens on the
 * process-wide diagnostics channels, which every simulated instance publishes on; here it records
 * on a meter provider of the probe's, enabled between the two waits and disabled at its end. The
 * first live instance holds `mw`; the second's first caller waits for it, recording starts, its
 * second caller waits; the holder releases, the first waiter gets the lock (queue order), and
 * `lock.waiting` for `mw` must still read 1. After the faults; draws nothing from the random
 * streams.
 */
export async function metricsPairingProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const [a, b] = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  if (a === undefined || b === undefined) return;
  const holder = await settleCall(world, a.service.acquire(KEY, { name: KEY, ttl: TTL_MS }), check, stop);
  if (holder === undefined || world.violation) return;
  const sums = new Map<string, number>();
  const waiting = (): number => sums.get(`lock.waiting|${KEY}`) ?? 0;
  let handle: LockMetricsHandle | undefined;
  const first: Waiter = {};
  const second: Waiter = {};
  const subscription = b.service.events$.subscribe((event) => {
    if (event.type !== 'waiting' || event.key !== KEY) return;
    if (first.announced === undefined) first.announced = true;
    else second.announced = true;
  });
  try {
    wait(world, b, first);
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || first.announced === true || first.failed === true);
    if (world.violation || first.announced !== true) return;
    handle = enableLockMetrics({ meterProvider: summingProvider(sums) });
    wait(world, b, second);
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || second.announced === true || second.failed === true);
    // The shape did not form: the second caller got in, or its wait was not counted.
    if (world.violation || second.announced !== true || second.lock !== undefined || waiting() !== 1) return;
    world.trace(a, `metrics-pairing probe: releases ${KEY} #${holder.fencingToken}; ${b.name}'s first waiter began before recording, its second after`);
    void holder.release().catch(() => undefined);
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || first.lock !== undefined || first.failed === true);
    if (world.violation || first.lock === undefined || second.lock !== undefined || second.failed === true) return;
    if (waiting() !== 1) {
      world.violate(b, 'the lock metrics count down only what they counted up: lock.waiting still counts a wait begun while recording once one begun before ends',
        `${KEY}: the wait begun before recording got #${first.lock.fencingToken} while the one begun after still waits; lock.waiting for ${KEY} reads ${waiting()}`);
    }
  } finally {
    subscription.unsubscribe();
    handle?.disable();
    void holder.release().catch(() => undefined);
    for (const waiter of [first, second]) {
      if (waiter.lock !== undefined) void waiter.lock.release().catch(() => undefined);
      // Released as it gets the lock, if it still waits.
      waiter.failed = true;
    }
  }
}

/** Starts a waiting call of `instance` for the probe's key. */
function wait(world: World, instance: Instance, waiter: Waiter): void {
  instance.service.acquire(KEY, { name: KEY, ttl: TTL_MS, waitTimeout: 60_000 }).then(
    (lock) => {
      if (waiter.failed === true) {
        void lock.release().catch(() => undefined);
        return;
      }
      waiter.lock = lock;
      world.trace(instance, `metrics-pairing probe: a waiter holds ${KEY} #${lock.fencingToken}`);
    },
    () => (waiter.failed = true),
  );
}
