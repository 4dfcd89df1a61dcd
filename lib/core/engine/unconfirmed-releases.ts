import type { Clock, ClockTimer } from '../time/clock.js';
import type { LockRedisKeys } from '../keys/lock-key.js';

/** How an owner of unconfirmed releases sends one again while it runs. */
export interface ReleaseResender {
  readonly clock: Clock;
  /** Sends the owner-checked release again; any answer settles it. */
  resend(names: LockRedisKeys, token: string): Promise<unknown>;
  /** Runs `fn` outside any caller's call chain (the retry timer belongs to no call). */
  outside<T>(fn: () => T): T;
}

/** The first retry comes this long after a release failed, the next ones twice as late each, up to the cap. */
export const FIRST_RELEASE_RETRY_MS = 250;
export const MAX_RELEASE_RETRY_MS = 4_000;

interface Pending {
  names: LockRedisKeys;
  token: string;
  until: number;
  sending?: boolean;
}

/**
 * Releases that failed without an answer (the connection was down, the client gave up, the
 * reply was lost, or a Cluster slot was migrating: TRYAGAIN): the holder is done with its lock,
 * but Redis may still hold it, and every waiter of the key would wait out the rest of its lease.
 * With a `resender` they are sent again while their lease may still run, after 250 ms, then
 * twice as late each time up to 4 s, on one unref'd timer; shutdown sends those left once more,
 * so that `app.close()` leaves no such lock behind. A later answer either way needs no
 * bookkeeping: an owner-checked release of a lock already released, expired or another owner's
 * changes nothing.
 */
export class UnconfirmedReleases {
  private readonly pending = new Map<string, Pending>();
  private sweepAt = 64;
  private timer?: ClockTimer;
  private delay = FIRST_RELEASE_RETRY_MS;
  private stopped = false;

  constructor(private readonly resender?: ReleaseResender) {}

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
    this.arm();
  }

  /** Those whose lease may still run at `now`, taken out; no retry runs after this (shutdown). */
  take(now: number): { names: LockRedisKeys; token: string }[] {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    const due = [...this.pending.values()].filter((entry) => entry.until > now).map(({ names, token }) => ({ names, token }));
    this.pending.clear();
    return due;
  }

  private arm(): void {
    const resender = this.resender;
    if (resender === undefined || this.timer !== undefined || this.stopped) return;
    this.timer = resender.outside(() => resender.clock.setTimer(() => this.retry(resender), this.delay, true));
  }

  private retry(resender: ReleaseResender): void {
    this.timer = undefined;
    if (this.pending.size === 0) {
      this.delay = FIRST_RELEASE_RETRY_MS;
      return;
    }
    const now = resender.clock.now();
    for (const [key, entry] of this.pending) {
      if (entry.until <= now) this.pending.delete(key);
      else if (!entry.sending) this.send(resender, key, entry);
    }
    this.delay = Math.min(2 * this.delay, MAX_RELEASE_RETRY_MS);
    this.arm();
  }

  private send(resender: ReleaseResender, key: string, entry: Pending): void {
    entry.sending = true;
    let reply: Promise<unknown>;
    try {
      reply = resender.resend(entry.names, entry.token);
    } catch {
      entry.sending = false;
      return;
    }
    reply.then(
      () => {
        if (this.pending.get(key) === entry) this.pending.delete(key);
      },
      () => {
        entry.sending = false;
      },
    );
  }
}
