import type { Clock, ClockTimer } from '../time/clock.js';
import type { LockRedisKeys } from '../keys/lock-key.js';

/** How an owner of unconfirmed releases sends one again while it runs. */
export interface ReleaseResender {
  readonly clock: Clock;
  /** Sends the owner-checked release again; any answer settles it. */
  resend(names: LockRedisKeys, token: string): Promise<unknown>;
  /** Runs `fn` outside any caller's call chain (the retry timer belongs to no call). */
  outside<T>(fn: () => T): T;
  /** Whether nothing can be sent any more (every client closed): what is left is given up, unsent. */
  closed?(): boolean;
  /** Whether `error`, a resend's, is a refusal asking again cannot change (see `lastingRefusal`): that release is given up. */
  refusedForGood?(error: unknown): boolean;
}

/** The first retry comes this long after a release failed, the next ones twice as late each, up to the cap. */
export const FIRST_RELEASE_RETRY_MS = 250;
export const MAX_RELEASE_RETRY_MS = 4_000;

interface Pending {
  names: LockRedisKeys;
  token: string;
  until: number;
  /** When it is sent again, and how long it waits after a failed resend (its own backoff). */
  dueAt: number;
  delay: number;
  sending?: boolean;
  /** How to send it again, if not as a release (a waiter's leave). */
  send?: () => Promise<unknown>;
}

/**
 * Releases that failed without an answer (the connection was down, the client gave up, the
 * reply was lost, or a Cluster slot was migrating: TRYAGAIN): the holder is done with its lock,
 * but Redis may still hold it, and every waiter of the key would wait out the rest of its lease.
 * So do the leaves of callers that gave up waiting (or were waiting when shutdown came): their
 * place in the queue, or a lock an attempt of theirs took, would be handed to nobody.
 * With a `resender` each is sent again while its lease may still run, 250 ms after it failed,
 * then twice as late each time up to 4 s (its own backoff: a new failure is not held up by an
 * older one's), on one unref'd timer set for the soonest. Shutdown sends those left at once and
 * goes on with them, and with the releases of the shutdown itself that fail (a failover under
 * way answers READONLY), until `stop()`, so that `app.close()` leaves no such lock behind while
 * its `shutdownTimeout` lasts. A later answer either way needs no bookkeeping: an owner-checked
 * release of a lock already released, expired or another owner's changes nothing. A release
 * refused for good (its client closed, a command the server or the ACL refuses) is given up: sent
 * again, it would only be refused again until the shutdown ran out of time; shutdown names the
 * locks it gave up so (`givenUpAtShutdown`), which stay in Redis until their ttl.
 */
export class UnconfirmedReleases {
  private readonly pending = new Map<string, Pending>();
  private sweepAt = 64;
  private timer?: ClockTimer;
  private timerAt = Infinity;
  private stopped = false;
  private whenIdle?: { promise: Promise<void>; resolve: () => void };
  /** From `resendAll` on (shutdown): the locks whose release was given up, whose lease may still run. */
  private givenUp?: Set<string>;

  constructor(private readonly resender?: ReleaseResender) {}

  /**
   * `until`: when the lease has surely ended in Redis (its local deadline plus a ttl). `send`:
   * for what is given back otherwise than by the release (a waiter's leave), sent the same way.
   */
  add(names: LockRedisKeys, token: string, until: number, now: number, send?: () => Promise<unknown>): void {
    // Spent entries go as new ones come, in a sweep each time the map doubled: a walk per entry
    // would cost the square of the releases one outage leaves unconfirmed.
    if (this.pending.size >= this.sweepAt) {
      for (const [key, entry] of this.pending) if (entry.until <= now) this.pending.delete(key);
      this.sweepAt = Math.max(64, 2 * this.pending.size);
    }
    // A multi-key lock may use one token for all its keys. A grant given back unconfirmed and
    // the leave of its acquisition share a token: the later end and the leave (which does more) win.
    const key = `${names.lock}\n${token}`;
    const before = this.pending.get(key);
    this.pending.set(key, { names, token, until: Math.max(until, before?.until ?? until), dueAt: now + FIRST_RELEASE_RETRY_MS, delay: FIRST_RELEASE_RETRY_MS, send: send ?? before?.send });
    this.arm(now + FIRST_RELEASE_RETRY_MS);
  }

  /**
   * A release that cannot be sent (its client closed: see `ReleaseResender.closed`), given up
   * before it was added; at shutdown its lock is named with the others given up.
   */
  giveUp(names: LockRedisKeys, until: number, now: number): void {
    if (until > now) this.givenUp?.add(names.lock);
  }

  /** The Redis keys of the locks whose release shutdown gave up: they stay in Redis until their ttl. */
  givenUpAtShutdown(): string[] {
    return [...(this.givenUp ?? [])];
  }

  /** Shutdown: every release whose lease may still run is sent again now (then as before, each on its backoff). */
  resendAll(now: number): void {
    this.givenUp ??= new Set();
    // retry() reads as the armed timer having fired: cancel it, or it would fire after stop().
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
    for (const entry of this.pending.values()) entry.dueAt = Math.min(entry.dueAt, now);
    if (this.resender !== undefined && !this.stopped) this.retry(this.resender);
  }

  /** Whether a release is left to confirm whose lease may still run at `now`. */
  left(now: number): boolean {
    if (this.stopped) return false;
    for (const entry of this.pending.values()) if (entry.until > now) return true;
    return false;
  }

  /** Resolves once no release is left to confirm (answered, or its lease over), or at `stop()`. */
  settled(): Promise<void> {
    if (this.pending.size === 0 || this.stopped) return Promise.resolve();
    if (this.whenIdle === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.whenIdle = { promise, resolve };
    }
    return this.whenIdle.promise;
  }

  /** No retry runs after this (the end of shutdown); what is left expires on its own. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.pending.clear();
    this.idle();
  }

  private idle(): void {
    if (this.pending.size > 0 || this.whenIdle === undefined) return;
    const { resolve } = this.whenIdle;
    this.whenIdle = undefined;
    resolve();
  }

  /** Sets the timer for `at`, unless it is set for sooner already. */
  private arm(at: number): void {
    const resender = this.resender;
    if (resender === undefined || this.stopped || at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = at;
    const delay = Math.max(0, at - resender.clock.now());
    this.timer = resender.outside(() => resender.clock.setTimer(() => this.retry(resender), delay, true));
  }

  private retry(resender: ReleaseResender): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = resender.clock.now();
    let next = Infinity;
    const closed = resender.closed?.() === true;
    for (const [key, entry] of this.pending) {
      if (entry.until <= now) this.pending.delete(key);
      else if (closed) this.drop(key, entry, now);
      else if (entry.sending) continue;
      else if (entry.dueAt <= now) this.send(resender, key, entry);
      else next = Math.min(next, entry.dueAt);
    }
    if (next < Infinity) this.arm(next);
    this.idle();
  }

  private send(resender: ReleaseResender, key: string, entry: Pending): void {
    entry.sending = true;
    const failed = (): void => {
      entry.sending = false;
      entry.delay = Math.min(2 * entry.delay, MAX_RELEASE_RETRY_MS);
      entry.dueAt = resender.clock.now() + entry.delay;
      if (this.pending.get(key) === entry) this.arm(entry.dueAt);
    };
    let reply: Promise<unknown>;
    try {
      reply = entry.send === undefined ? resender.resend(entry.names, entry.token) : entry.send();
    } catch {
      failed();
      return;
    }
    reply.then(
      () => {
        if (this.pending.get(key) === entry) this.pending.delete(key);
        this.idle();
      },
      (error: unknown) => {
        if (resender.refusedForGood?.(error) !== true) return failed();
        if (this.pending.get(key) === entry) this.drop(key, entry, resender.clock.now());
        this.idle();
      },
    );
  }

  /** A leave given up is not named: its attempt was refused alike, and took nothing (bar one on a client closed under it). */
  private drop(key: string, entry: Pending, now: number): void {
    this.pending.delete(key);
    if (entry.send === undefined) this.giveUp(entry.names, entry.until, now);
  }
}
