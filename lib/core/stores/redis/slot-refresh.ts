import type { LockLogger } from '../../engine/lock-logger.js';
import { systemClock, type Clock } from '../../time/clock.js';

/** At most one refresh per this many ms: a refresh asks a node for the whole slot map. */
export const SLOT_REFRESH_GAP_MS = 1_000;

/**
 * Asks a Cluster client to read its slot map again when the lock engine saw a command left
 * unanswered past the bound it waits for one (a renewal past its tick, an acquire attempt past
 * its bound): see `LockBackend.unanswered`.
 *
 * A master that freezes (a paused VM, a partition that resets nothing) keeps its connections
 * open, so the client gets no error from it, and ioredis refreshes its slot map only on an error
 * (MOVED, a closed connection) or on `slotsRefreshInterval` (off by default). Once the cluster
 * promoted the frozen master's replica, every renewal and acquire of that shard would still go
 * to the frozen connection: the replicated locks the failover kept would be lost at their
 * deadlines, and the shard unusable for the process. A refresh learns the new master; the
 * watchdog's next tick sends the renewals there.
 *
 * No timer of its own: it runs only when the engine's own timeouts fire. At most one refresh is
 * in flight, and one starts at most every `SLOT_REFRESH_GAP_MS`. A failed refresh (the nodes it
 * asked did not answer) is logged once until one succeeds again.
 */
export class SlotRefresh {
  private inFlight = false;
  /** When the last refresh started (-Infinity: none yet). */
  private startedAt = -Infinity;
  private failing = false;
  private closed = false;

  constructor(
    private readonly refresh: () => Promise<void>,
    private readonly logger: LockLogger,
    private readonly clock: Clock = systemClock,
  ) {}

  /** A command went unanswered: refresh the slot map, unless one is under way or just ran. */
  request(): void {
    if (this.closed || this.inFlight || this.clock.now() - this.startedAt < SLOT_REFRESH_GAP_MS) return;
    this.inFlight = true;
    this.startedAt = this.clock.now();
    let refreshed: Promise<void>;
    try {
      refreshed = this.refresh();
    } catch (error) {
      refreshed = Promise.reject(error);
    }
    refreshed.then(
      () => {
        this.inFlight = false;
        this.failing = false;
      },
      (error: unknown) => {
        this.inFlight = false;
        if (this.closed || this.failing) return;
        this.failing = true;
        this.logger.warn(`Refreshing the Cluster slot map after an unanswered command failed (${(error as Error | undefined)?.message}); retried while commands stay unanswered.`);
      },
    );
  }

  /** The application closes: no refresh from now on (one under way ends with the client). */
  close(): void {
    this.closed = true;
  }
}
