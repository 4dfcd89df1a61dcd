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
 * @internal What became of a multi-key lock as a whole, for the lock metrics (lib/otel), which
 * count such a lock once: its keys' events come per key (with `keys`), and cannot say on their
 * own whether the call got the lock (a key taken is given back when a later one is busy). Not
 * one of the public channels: `events$` and those stay per key.
 */
export const MULTI_KEY_LOCK_CHANNEL = 'nestjs-redis-lock:internal:multi-key-lock';

/** @internal A message of `MULTI_KEY_LOCK_CHANNEL`; `lock` tells one multi-key lock from another. */
export type MultiKeyLockOutcome = { lock: object; name?: string } & (
  | { type: 'acquired'; waitedMs: number }
  | { type: 'not-acquired'; waitedMs: number; outcome: LockNotAcquiredOutcome }
  | { type: 'released'; heldMs: number }
  | { type: 'lost'; heldMs: number; reason: LockLostReason }
);

const multiKeyLocks = channel(MULTI_KEY_LOCK_CHANNEL);

/** Publishes `message` on `MULTI_KEY_LOCK_CHANNEL`, built only if anyone subscribed. */
export function publishMultiKeyLock(message: () => MultiKeyLockOutcome): void {
  if (multiKeyLocks.hasSubscribers) multiKeyLocks.publish(message());
}
