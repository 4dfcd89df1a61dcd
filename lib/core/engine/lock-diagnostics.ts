import { channel, type Channel } from 'node:diagnostics_channel';
import type { LockEvent, LockNotAcquiredOutcome } from '../../interfaces/lock-event.interface.js';
import type { LockLostReason } from '../../errors/lock-lost.error.js';

/**
 * The `node:diagnostics_channel` channel of each lock event type. Every event `LockService`
 * emits is also published on `nestjs-redis-lock:<type>`, so that APM agents and tools can
 * watch locks of every `LockService` in the process without depending on this package. The
 * subscribers of a channel share each message, as with any diagnostics channel: read it, do not
 * change it (the library's OTel metrics read it too). It is not the object `events$`
 * subscribers get.
 */
export const LOCK_DIAGNOSTICS_CHANNELS: { readonly [T in LockEvent['type']]: `nestjs-redis-lock:${T}` } = {
  waiting: 'nestjs-redis-lock:waiting',
  acquired: 'nestjs-redis-lock:acquired',
  renewed: 'nestjs-redis-lock:renewed',
  released: 'nestjs-redis-lock:released',
  lost: 'nestjs-redis-lock:lost',
  'not-acquired': 'nestjs-redis-lock:not-acquired',
  'force-released': 'nestjs-redis-lock:force-released',
  skipped: 'nestjs-redis-lock:skipped',
};

// Channels are looked up once: `channel()` goes through a global registry.
const channels = Object.fromEntries(
  Object.entries(LOCK_DIAGNOSTICS_CHANNELS).map(([type, name]) => [type, channel(name)]),
) as Record<LockEvent['type'], Channel>;
const all = Object.values(channels);

/** Whether any channel has a subscriber: without one, events need not even be built. */
export function diagnosticsListening(): boolean {
  for (const each of all) if (each.hasSubscribers) return true;
  return false;
}

/** Publishes `event` on its channel, if anyone subscribed to it. */
export function publishDiagnostics(event: LockEvent): void {
  const target = channels[event.type];
  if (target.hasSubscribers) target.publish(event);
}

/**
 * @internal What a lock event is about, for the lock metrics (lib/otel), which count a wait or a
 * held lock down only at the end of one they counted up: the call that waited (its `waiting`,
 * and the `acquired` or `not-acquired` that ends that wait) and the lock held (its `acquired`,
 * `released`, `lost`). Key and name alone do not tell two waits (two unfenced holders) apart,
 * and a wait begun before recording started would take a counted one's count. Events are built
 * only while anyone listens; these are looked up only by the recorder.
 */
const eventCalls = new WeakMap<LockEvent, object>();
const eventLocks = new WeakMap<LockEvent, object>();

/** @internal Tags `event` as one of the call `call` (see `eventCalls`); returns it. */
export function ofCall<E extends LockEvent>(event: E, call: object | undefined): E {
  if (call !== undefined) eventCalls.set(event, call);
  return event;
}

/** @internal Tags `event` as one of the held lock `lock` (see `eventCalls`); returns it. */
export function ofLock<E extends LockEvent>(event: E, lock: object): E {
  eventLocks.set(event, lock);
  return event;
}

/** @internal The call `event` is about, where the engine said (see `eventCalls`). */
export function callOfEvent(event: LockEvent): object | undefined {
  return eventCalls.get(event);
}

/** @internal The held lock `event` is about, where the engine said (see `eventCalls`). */
export function lockOfEvent(event: LockEvent): object | undefined {
  return eventLocks.get(event);
}

/**
 * @internal What became of a multi-key lock as a whole, for the lock metrics (lib/otel), which
 * count such a lock once: its keys' events come per key (with `keys`), and cannot say on their
 * own whether the call got the lock (a key taken is given back when a later one is busy). Not
 * one of the public channels: `events$` and those stay per key.
 */
export const MULTI_KEY_LOCK_CHANNEL = 'nestjs-redis-lock:internal:multi-key-lock';

/** @internal A message of `MULTI_KEY_LOCK_CHANNEL`; `lock` tells one multi-key lock from another. */
export type MultiKeyLockOutcome = { lock: object; name?: string } & (
  /** `keys`: the array its keys' events carry as theirs (one per call), when a key was taken (not re-entered). */
  | { type: 'acquired'; waitedMs: number; keys?: readonly string[] }
  | { type: 'not-acquired'; waitedMs: number; outcome: LockNotAcquiredOutcome }
  | { type: 'released'; heldMs: number }
  | { type: 'lost'; heldMs: number; reason: LockLostReason }
);

const multiKeyLocks = channel(MULTI_KEY_LOCK_CHANNEL);

/** Publishes `message` on `MULTI_KEY_LOCK_CHANNEL`, built only if anyone subscribed. */
export function publishMultiKeyLock(message: () => MultiKeyLockOutcome): void {
  if (multiKeyLocks.hasSubscribers) multiKeyLocks.publish(message());
}
