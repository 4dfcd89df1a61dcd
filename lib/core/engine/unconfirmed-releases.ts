import type { LockRedisKeys } from '../keys/lock-key.js';

/**
 * Releases that failed without an answer (the connection was down, the client gave up, or the
 * reply was lost): the holder is done with its lock, but Redis may still hold it. Shutdown sends
 * them again, owner-checked, so that `app.close()` leaves no such lock behind while its lease
 * may still run. A later answer either way needs no bookkeeping: an owner-checked release of a
 * lock already released, expired or another owner's changes nothing.
 */
export class UnconfirmedReleases {
  private readonly pending = new Map<string, { names: LockRedisKeys; token: string; until: number }>();
  private sweepAt = 64;

  /** `until`: when the lease has surely ended in Redis (its local deadline plus a ttl). */
  add(names: LockRedisKeys, token: string, until: number, now: number): void {
    // Spent entries go as new ones come, in a sweep each time the map doubled: a walk per entry
    // would cost the square of the releases one outage leaves unconfirmed.
    if (this.pending.size >= this.sweepAt) {
      for (const [key, entry] of this.pending) if (entry.until <= now) this.pending.delete(key);
      this.sweepAt = Math.max(64, 2 * this.pending.size);
    }
    // A multi-key lock may use one token for all its keys.
    this.pending.set(`${names.lock}\n${token}`, { names, token, until });
  }

  /** Those whose lease may still run at `now`, taken out. */
  take(now: number): { names: LockRedisKeys; token: string }[] {
    const due = [...this.pending.values()].filter((entry) => entry.until > now);
    this.pending.clear();
    return due;
  }
}
