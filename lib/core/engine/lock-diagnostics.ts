import { channel, type Channel } from 'node:diagnostics_channel';
import type { LockEvent } from '../../interfaces/lock-event.interface.js';

/**
 * The `node:diagnostics_channel` channel of each lock event type. Every event `LockService`
 * emits is also published on `nestjs-redis-lock:<type>`, so that APM agents and tools can
 * watch locks of every `LockService` in the process without depending on this package.
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
