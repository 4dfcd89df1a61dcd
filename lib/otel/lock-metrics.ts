import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createNoopMeter, metrics, type Attributes, type Meter, type MeterProvider, type UpDownCounter } from '@opentelemetry/api';
import { LOCK_DIAGNOSTICS_CHANNELS, MULTI_KEY_LOCK_CHANNEL, callOfEvent, lockOfEvent, type MultiKeyLockOutcome } from '../core/engine/lock-diagnostics.js';
import type { LockEvent } from '../interfaces/lock-event.interface.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { escapeUnsafe } from '../core/keys/quote-key.js';
import { cutWhole } from '../core/keys/cut-text.js';

/** Options of {@link enableLockMetrics} and `RedisLockMetricsModule.forRoot()`. */
export interface LockMetricsOptions {
  /** Where to record; default the global meter provider (`metrics.setGlobalMeterProvider()`). */
  meterProvider?: MeterProvider;
}

/** Stops recording lock metrics. */
export interface LockMetricsHandle {
  /**
   * Stops recording (with the last handle of its meter provider): `lock.active` and
   * `lock.waiting` are brought back to 0 for the locks still held and the waits still going,
   * whose ends are no longer recorded.
   */
  disable(): void;
}

/** `lock.name` of a lock that was given none (the key itself is never used: ids explode series). */
export const UNNAMED_LOCK = '(unnamed)';

const METER_NAME = 'nestjs-redis-lock';

/**
 * The bucket boundaries, in seconds, that `lock.acquire.duration` and `lock.hold.duration`
 * advise the SDK to use (0.5 ms to 10 min): a lock is often taken in a millisecond and held
 * for minutes by a job. The SDK's default boundaries (0 to 10000) are meant for milliseconds;
 * a View configured in the SDK still overrides this advice.
 */
export const LOCK_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
]);

/**
 * Records OpenTelemetry metrics for the locks of every `LockService` of the process, from the
 * `node:diagnostics_channel` events they publish:
 *
 * | instrument | kind | unit | attributes |
 * |---|---|---|---|
 * | `lock.acquire.duration` | histogram | s | `lock.name`, `lock.result` (`acquired`, `busy`, `timeout`, `error`, `aborted`) |
 * | `lock.hold.duration` | histogram | s | `lock.name` |
 * | `lock.active` | up-down counter | {lock} | `lock.name` |
 * | `lock.waiting` | up-down counter | {caller} | `lock.name` |
 * | `lock.lost` | counter | {lock} | `lock.name`, `lock.lost.reason` (`refused`, `expired`, `shutdown`) |
 * | `lock.skipped` | counter | {call} | `lock.name`, `lock.skip.reason` (`held-elsewhere`, `other-owner`, `shutting-down`, `lease-expired`, `owner-uncertain`) |
 *
 * Both histograms advise the buckets {@link LOCK_DURATION_BUCKETS} (seconds, 0.5 ms to 10 min).
 * A multi-key lock counts as one lock: one acquisition outcome per call, one in `lock.active`,
 * one hold, one loss (its keys' events, which carry `keys`, count only as waits).
 *
 * When no meter provider is registered (the API's no-op one), it subscribes to nothing, so
 * locks cost exactly what they cost without it, and warns once: the API's global meter provider
 * is read when metrics are enabled, so a provider the SDK registers later records nothing.
 *
 * A meter that throws when it makes an instrument costs that instrument only: the others record,
 * and one `process.emitWarning` names those not recorded and why.
 *
 * @example
 * ```ts
 * import { enableLockMetrics } from 'nestjs-redis-lock/otel';
 * const metricsHandle = enableLockMetrics(); // after the OpenTelemetry SDK has started
 * ```
 */
export function enableLockMetrics(options: LockMetricsOptions = {}): LockMetricsHandle {
  checkMetricsOptions(options, 'enableLockMetrics()');
  const provider = options.meterProvider ?? metrics.getMeterProvider();
  // One recorder per provider, however many applications (and so modules) of the process enable
  // it: every LockService publishes on the same process-wide channels, so a second recorder
  // would count each event twice.
  const shared = recorders.get(provider) ?? startRecorder(provider);
  if (shared === undefined) {
    if (options.meterProvider === undefined) warnNoGlobalProvider();
    return { disable: () => undefined };
  }
  recorders.set(provider, shared);
  shared.users++;
  let enabled = true;
  return {
    disable: () => {
      if (!enabled) return;
      enabled = false;
      if (--shared.users > 0) return;
      recorders.delete(provider);
      shared.stop();
    },
  };
}

const recorders = new Map<MeterProvider, { users: number; stop(): void }>();

let warnedNoGlobalProvider = false;

/**
 * The API's global meter provider is no proxy (unlike its tracer provider): enabled before the SDK
 * registers its provider, nothing is recorded, even once it has. Said once a process, never for a
 * `meterProvider` given on purpose.
 */
function warnNoGlobalProvider(): void {
  if (warnedNoGlobalProvider) return;
  warnedNoGlobalProvider = true;
  process.emitWarning(
    'nestjs-redis-lock: lock metrics are not recorded: no OpenTelemetry meter provider was registered globally when they were enabled, ' +
      'and one registered later is not picked up. Start the OpenTelemetry SDK before the application (before enableLockMetrics()), ' +
      'or pass { meterProvider }.',
  );
}

function startRecorder(provider: MeterProvider): { users: number; stop(): void } | undefined {
  // A meter that throws when it is asked for, or when it makes an instrument (a bug in an SDK, a
  // wrapper refusing a name, a View that fails), costs the metrics it could not make, never the
  // application: this runs in RedisLockMetricsModule's init, whose error would stop the startup.
  let meter: Meter;
  try {
    meter = provider.getMeter(METER_NAME);
  } catch (error) {
    warnNotMade(INSTRUMENT_NAMES, error);
    return notRecording();
  }
  if (isNoop(meter)) return undefined;
  const notMade: string[] = [];
  let failure: unknown;
  const make = <T>(name: string, create: (name: string) => T): T | undefined => {
    try {
      return create(name);
    } catch (error) {
      notMade.push(name);
      if (notMade.length === 1) failure = error;
      return undefined;
    }
  };
  // NOTE: `advice` needs @opentelemetry/api 1.7 (hence the peer range); an SDK that predates
  // it ignores it and falls back to its own boundaries.
  const advice = { explicitBucketBoundaries: [...LOCK_DURATION_BUCKETS] };
  const acquire = make('lock.acquire.duration', (name) => meter.createHistogram(name, { unit: 's', description: 'Time to acquire a lock, or to give up on it.', advice }));
  const hold = make('lock.hold.duration', (name) => meter.createHistogram(name, { unit: 's', description: 'Time from acquisition to release or loss.', advice }));
  const active = new Tallied(make('lock.active', (name) => meter.createUpDownCounter(name, { unit: '{lock}', description: 'Locks held by this process.' })));
  const waiting = new Tallied(make('lock.waiting', (name) => meter.createUpDownCounter(name, { unit: '{caller}', description: 'Callers waiting for a busy lock.' })));
  const lost = make('lock.lost', (name) => meter.createCounter(name, { unit: '{lock}', description: 'Locks lost while held.' }));
  const skipped = make('lock.skipped', (name) => meter.createCounter(name, { unit: '{call}', description: 'Calls of job methods skipped without running.' }));
  if (notMade.length > 0) warnNotMade(notMade, failure);
  if (notMade.length === INSTRUMENT_NAMES.length) return notRecording();
  // The up-down counters count down only what this recorder counted up: a lock taken (or a wait
  // begun) before it started ends without having been counted, and must not take a gauge below
  // what it holds, nor take the count of a later one of the same key and name (the gauge would
  // read one less while that one lasts). The engine tells which call waited and which lock is
  // held (`callOfEvent`, `lockOfEvent`); events published by another copy of this package in the process are
  // not told apart so, and are paired by key, name and fencing token (unfenced: key and name).
  const held = new Pairs();
  const waiters = new Pairs();
  const waitId = (event: { key: string; name?: string }): string => `${event.key}\u0000${event.name ?? ''}`;
  const heldId = (event: { key: string; name?: string; fencingToken?: number }): string => (event.fencingToken === undefined ? waitId(event) : `${waitId(event)}\u0000${event.fencingToken}`);

  // A channel subscriber's exception is rethrown as an uncaught one: a meter that throws (a bug in
  // an SDK, an exporter or a wrapper) must cost its metrics, never the application; and each
  // instrument on its own, so that a histogram that throws leaves the counts of `lock.active`
  // and `lock.waiting` true.
  let warned = false;
  // Whether the instrument recorded: a count up the meter refused is not paired with its lock or
  // wait, whose end then counts nothing down (the gauge would read one less while the process lives).
  const use = (instrument: () => void): boolean => {
    try {
      instrument();
      return true;
    } catch (error) {
      if (warned) return false;
      warned = true;
      process.emitWarning(`nestjs-redis-lock: recording a lock metric failed (${errorText(error)}); the lock was not affected. Later failures are not reported.`);
      return false;
    }
  };
  // A multi-key lock is one lock: one outcome per call, one in `lock.active`, one hold, one loss,
  // told on MULTI_KEY_LOCK_CHANNEL. Its keys' own events (with `keys`) count only as waits: the
  // call waits on one key at a time. Each multi-key lock counted up, by identity.
  const wholes = new WeakSet<object>();
  const record = (message: unknown): void => {
    const event = message as LockEvent;
    const name: Attributes = { 'lock.name': event.name ?? UNNAMED_LOCK };
    const part = event.keys !== undefined;
    switch (event.type) {
      case 'waiting':
        if (use(() => waiting.add(1, name))) waiters.up(callOfEvent(event), waitId(event));
        break;
      case 'acquired':
        if (!part) {
          use(() => acquire?.record(event.waitedMs / 1000, { ...name, 'lock.result': 'acquired' }));
          if (use(() => active.add(1, name))) held.up(lockOfEvent(event), heldId(event));
        }
        if (event.afterWaiting && waiters.down(callOfEvent(event), waitId(event))) use(() => waiting.add(-1, name));
        break;
      case 'not-acquired':
        if (!part) use(() => acquire?.record(event.waitedMs / 1000, { ...name, 'lock.result': event.outcome }));
        if (event.afterWaiting && waiters.down(callOfEvent(event), waitId(event))) use(() => waiting.add(-1, name));
        break;
      case 'released':
        if (part) break;
        use(() => hold?.record(event.heldMs / 1000, name));
        if (held.down(lockOfEvent(event), heldId(event))) use(() => active.add(-1, name));
        break;
      case 'lost':
        if (part) break;
        use(() => hold?.record(event.heldMs / 1000, name));
        if (held.down(lockOfEvent(event), heldId(event))) use(() => active.add(-1, name));
        use(() => lost?.add(1, { ...name, 'lock.lost.reason': event.reason }));
        break;
      case 'skipped':
        use(() => skipped?.add(1, { ...name, 'lock.skip.reason': event.reason }));
        break;
    }
  };
  const recordWhole = (message: unknown): void => {
    const whole = message as MultiKeyLockOutcome;
    const name: Attributes = { 'lock.name': whole.name ?? UNNAMED_LOCK };
    switch (whole.type) {
      case 'acquired':
        use(() => acquire?.record(whole.waitedMs / 1000, { ...name, 'lock.result': 'acquired' }));
        if (use(() => active.add(1, name))) wholes.add(whole.lock);
        break;
      case 'not-acquired':
        use(() => acquire?.record(whole.waitedMs / 1000, { ...name, 'lock.result': whole.outcome }));
        break;
      case 'released':
      case 'lost':
        use(() => hold?.record(whole.heldMs / 1000, name));
        if (wholes.delete(whole.lock)) use(() => active.add(-1, name));
        if (whole.type === 'lost') use(() => lost?.add(1, { ...name, 'lock.lost.reason': whole.reason }));
        break;
    }
  };
  const recordSafely = (message: unknown): void => void use(() => record(message));
  const recordWholeSafely = (message: unknown): void => void use(() => recordWhole(message));
  const names = [
    LOCK_DIAGNOSTICS_CHANNELS.waiting,
    LOCK_DIAGNOSTICS_CHANNELS.acquired,
    LOCK_DIAGNOSTICS_CHANNELS['not-acquired'],
    LOCK_DIAGNOSTICS_CHANNELS.released,
    LOCK_DIAGNOSTICS_CHANNELS.lost,
    LOCK_DIAGNOSTICS_CHANNELS.skipped,
  ];
  for (const channelName of names) subscribe(channelName, recordSafely);
  subscribe(MULTI_KEY_LOCK_CHANNEL, recordWholeSafely);
  return {
    users: 0,
    stop: () => {
      for (const channelName of names) unsubscribe(channelName, recordSafely);
      unsubscribe(MULTI_KEY_LOCK_CHANNEL, recordWholeSafely);
      // The locks still held and the waits still going end unrecorded now, and the SDK would
      // export the counts they left for the process's life (a recorder enabled again cannot count
      // them down either): they are taken back.
      active.takeBack(use);
      waiting.takeBack(use);
    },
  };
}

/** The instruments a recorder makes, in the order it makes them. */
const INSTRUMENT_NAMES: readonly string[] = ['lock.acquire.duration', 'lock.hold.duration', 'lock.active', 'lock.waiting', 'lock.lost', 'lock.skipped'];

/** A recorder that records nothing (its meter made no instrument): nothing subscribed, nothing to stop. */
function notRecording(): { users: number; stop(): void } {
  return { users: 0, stop: () => undefined };
}

/** Says once, for one recorder, which instruments its meter could not make, and why. */
function warnNotMade(names: readonly string[], error: unknown): void {
  const which = names.length === INSTRUMENT_NAMES.length ? 'no lock metric is recorded' : `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} not recorded (the other lock metrics are)`;
  process.emitWarning(`nestjs-redis-lock: the OpenTelemetry meter could not make an instrument (${errorText(error)}): ${which}; the locks are not affected.`);
}

/** How long a meter's error text may be in a warning: it is the SDK's (or a wrapper's) text, of any length. */
const ERROR_TEXT_MAX = 200;

/**
 * A meter's error as a warning quotes it: its message cut to `ERROR_TEXT_MAX` between whole
 * characters, then escaped as a key in a message is (`escapeUnsafe`: C1 controls, line separators,
 * invisible formatting characters such as bidi overrides, lone surrogates), and the C0 controls too.
 */
function errorText(error: unknown): string {
  let text: string;
  try {
    text = error instanceof Error ? error.message : String(error);
  } catch {
    text = 'an error that cannot be printed';
  }
  const cut = cutWhole(text, ERROR_TEXT_MAX);
  // eslint-disable-next-line no-control-regex
  const shown = escapeUnsafe(cut).replace(/[\u0000-\u001f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return cut.length < text.length ? `${shown}…` : shown;
}

/** An up-down counter with what it was moved by under each `lock.name`, so that it can be taken back. */
class Tallied {
  private readonly tally = new Map<string, number>();

  /** `counter`: undefined when the meter could not make it (nothing is recorded nor tallied then). */
  constructor(private readonly counter: UpDownCounter | undefined) {}

  add(delta: 1 | -1, attributes: Attributes): void {
    if (this.counter === undefined) return;
    this.counter.add(delta, attributes);
    const name = attributes['lock.name'] as string;
    const sum = (this.tally.get(name) ?? 0) + delta;
    if (sum === 0) this.tally.delete(name);
    else this.tally.set(name, sum);
  }

  /** Moves the counter back by what it was moved, each name through `use` (a meter may throw). */
  takeBack(use: (instrument: () => void) => unknown): void {
    for (const [name, sum] of this.tally) use(() => this.counter?.add(-sum, { 'lock.name': name }));
    this.tally.clear();
  }
}

/** How many of each id were counted up and not yet down (an id leaves the map at zero). */
/** What an up-down counter counted up: by the call or lock itself where the engine said which, else by an id. */
class Pairs {
  private readonly sources = new WeakSet<object>();
  private readonly counts = new Counts();
  up(source: object | undefined, id: string): void {
    if (source === undefined) this.counts.up(id);
    else this.sources.add(source);
  }
  /** Counts down what was counted up for `source` (or `id`): false for one this recorder never saw begin. */
  down(source: object | undefined, id: string): boolean {
    return source === undefined ? this.counts.down(id) : this.sources.delete(source);
  }
}

class Counts {
  private readonly counts = new Map<string, number>();
  up(id: string): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
  }
  /** Counts `id` down if it was counted up: false for one this recorder never saw begin. */
  down(id: string): boolean {
    const count = this.counts.get(id);
    if (count === undefined) return false;
    if (count === 1) this.counts.delete(id);
    else this.counts.set(id, count - 1);
    return true;
  }
}

const NOOP_METER = createNoopMeter();

/** The API hands out a no-op meter when no SDK registered a provider. */
function isNoop(meter: Meter): boolean {
  return meter.constructor === NOOP_METER.constructor;
}

/** Refuses options that are not `LockMetricsOptions`, naming `where` (the function or module method). */
export function checkMetricsOptions(options: unknown, where: string): void {
  if (options === null || typeof options !== 'object') throw new InvalidLockOptionsError('options', options, 'an object').within(where);
  // A misspelt name (`meterprovider`) would record on the global provider, a no-op without an SDK.
  for (const name of Object.keys(options)) {
    if (name !== 'meterProvider') throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], 'left out: it is no option of the lock metrics (their one option is meterProvider)').within(where);
  }
  const { meterProvider } = options as LockMetricsOptions;
  if (meterProvider !== undefined && (meterProvider === null || typeof (meterProvider as { getMeter?: unknown }).getMeter !== 'function')) {
    throw new InvalidLockOptionsError('meterProvider', meterProvider, "an OpenTelemetry MeterProvider (with getMeter()), or left out for the API's global one").within(where);
  }
}
