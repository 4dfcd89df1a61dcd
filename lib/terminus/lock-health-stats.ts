import type { LockEvent } from '../interfaces/lock-event.interface.js';

/** How far back `locksLostRecently` counts. */
export const LOST_WINDOW_MS = 5 * 60_000;
/** How far back renewal latencies count. */
export const RENEWAL_WINDOW_MS = 60_000;
/** Bounds the memory of a process that loses or renews very many locks. */
const MAX_SAMPLES = 1_000;

/**
 * Renewal latencies and losses of the last minutes, from a `LockService`'s events. Samples are
 * kept in bounded rings: a storm of events costs memory once, not forever.
 */
export class LockHealthStats {
  private readonly renewals: { at: number; latencyMs: number }[] = [];
  private readonly losses: number[] = [];

  record(event: LockEvent): void {
    if (event.type === 'renewed') push(this.renewals, { at: event.at, latencyMs: event.latencyMs });
    // A lock given back at shutdown was not lost to a failure.
    else if (event.type === 'lost' && event.reason !== 'shutdown') push(this.losses, event.at);
  }

  /** Renewal round trips of the last minute, in milliseconds (undefined without any). */
  renewalLatency(now = Date.now()): { lastMs: number; maxMs: number; count: number } | undefined {
    const recent = this.renewals.filter((sample) => sample.at >= now - RENEWAL_WINDOW_MS);
    if (recent.length === 0) return undefined;
    return {
      lastMs: round(recent[recent.length - 1]!.latencyMs),
      maxMs: round(Math.max(...recent.map((sample) => sample.latencyMs))),
      count: recent.length,
    };
  }

  lostRecently(now = Date.now()): number {
    return this.losses.filter((at) => at >= now - LOST_WINDOW_MS).length;
  }
}

function push<T>(ring: T[], value: T): void {
  if (ring.length >= MAX_SAMPLES) ring.shift();
  ring.push(value);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
