import type { MeterProvider } from '@opentelemetry/api';
import { enableLockMetrics, type LockMetricsHandle } from '../../lib/otel/lock-metrics.js';
import type { MultiKeyLock } from '../../lib/interfaces/lock.interface.js';
import { SETTLE_MS } from './settle-call.js';
import { SHUTDOWN_TIMEOUT_MS, type World } from './world.js';

/** The probe's keys and its `lock.name`: nobody else calls them. */
const KEYS = ['mc-a', 'mc-b'];
const NAME = 'mc';
/** How long the call winds down once told to stop, well within the close's shutdownTimeout. */
const WIND_DOWN_MS = 200;

/** A meter provider that keeps the counters' and up-down counters' sums by instrument and `lock.name` (the histograms recorded nowhere). */
function summingProvider(sums: Map<string, number>): MeterProvider {
  const sum = (instrument: string) => ({
    add: (delta: number, attributes?: Record<string, unknown>) => {
      const id = `${instrument}|${String(attributes?.['lock.name'])}`;
      sums.set(id, (sums.get(id) ?? 0) + delta);
    },
  });
  const meter = { createHistogram: () => ({ record: () => undefined }), createCounter: sum, createUpDownCounter: sum };
  return { getMeter: () => meter } as unknown as MeterProvider;
}

/**
 * docs/observability.md ("Metrics"): a multi-key lock is one lock to the metrics; a `using()` or
 * `@Locked` call still running at `app.close()` is told to stop (its lock's signal aborts,
 * `shutdown`) and keeps its keys until it ends, then releases them, as a lock of one key does: it
 * reads as held (`lock.active` 1) while the call winds down, then as released, never in
 * `lock.lost` (7d394198: the close's signal told the metrics it was lost, `lock.active` 0 while
 * the call still held its keys, and one `lock.lost` with reason `shutdown`). No other probe
 * records metrics across a close. With lock metrics enabled (a meter provider of the probe's,
 * disabled at its end), an instance of the probe's own (see `World.probeInstance`: the plan's
 * stay for the final close) runs using(['mc-a', 'mc-b']) that winds down 200 ms once its signal
 * aborts, and closes while it runs: `lock.active` for `mc` must read 1 once the signal aborted,
 * and the close's end must leave 0 active, 0 lost. After the faults; draws nothing from the
 * random streams.
 */
export async function multiKeyCloseMetricsProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const x = world.probeInstance('multi-key close-metrics');
  const sums = new Map<string, number>();
  const read = (instrument: string): number => sums.get(`${instrument}|${NAME}`) ?? 0;
  const handle: LockMetricsHandle = enableLockMetrics({ meterProvider: summingProvider(sums) });
  const call: { lock?: MultiKeyLock; told?: { active: number; lost: number }; settled?: true } = {};
  try {
    void x.service
      .using(
        KEYS,
        async (lock) => {
          call.lock = lock;
          await new Promise<void>((resolve) => (lock.signal.aborted ? resolve() : lock.signal.addEventListener('abort', () => resolve(), { once: true })));
          call.told = { active: read('lock.active'), lost: read('lock.lost') };
          await x.sleep(WIND_DOWN_MS);
        },
        { name: NAME },
      )
      .catch((error: unknown) => world.trace(x, `multi-key close-metrics probe: the call failed: ${(error as Error).message}`))
      .finally(() => (call.settled = true));
    await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS, check, () => stop() || call.lock !== undefined || call.settled === true);
    // The shape did not form: the call did not get its keys (a reply late), or ended.
    if (world.violation || call.lock === undefined || call.settled === true || read('lock.active') !== 1) return;
    world.trace(x, `multi-key close-metrics probe: app.close() begins while using(${KEYS.join(', ')}) runs`);
    const closing = x.shutdown();
    let closed = false;
    void closing.then(() => (closed = true));
    await world.scheduler.run(world.scheduler.now + 10 * SHUTDOWN_TIMEOUT_MS, check, () => stop() || closed);
    if (world.violation || !closed || x.crashed) return;
    const told = call.told;
    const ended = { active: read('lock.active'), lost: read('lock.lost') };
    // Judged only when the close told the call to stop and the call gave its lock back itself.
    if (told === undefined || call.settled !== true || (call.lock.signal.reason as { reason?: string } | undefined)?.reason !== 'shutdown') return;
    if (told.active !== 1 || told.lost !== 0 || ended.active !== 0 || ended.lost !== 0) {
      world.violate(x, 'the lock metrics read a multi-key lock whose call still runs at app.close() as held until the call gives it back, then released',
        `using(${KEYS.join(', ')}) named ${NAME}: once the close told it to stop, lock.active read ${told.active} and lock.lost ${told.lost}; after the close, lock.active ${ended.active} and lock.lost ${ended.lost}`);
    }
  } finally {
    handle.disable();
  }
}
