import { LockLostError, type LockLostReason } from '../errors/lock-lost.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { LockEvent } from '../interfaces/lock-event.interface.js';
import type { Lock } from '../interfaces/lock.interface.js';
import { now } from './clock.js';
import type { LockRedisKeys } from './lock-key.js';
import type { LockLogger } from './lock-logger.js';
import { driftMargin, type LockTiming, MAX_TIMER_MS, MIN_TTL_MS } from './lock-options.js';
import type { LockScripts } from './lock-scripts.js';
import { Watchdog } from './watchdog.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';

/** What a held lock needs from the manager that created it. */
export interface LockOwner {
  readonly scripts: LockScripts;
  readonly logger: LockLogger;
  /** Whether anyone listens to events; spares building events nobody reads. */
  readonly listening: boolean;
  emit(event: LockEvent): void;
  /** The lock is no longer held (released or lost): stop tracking it. */
  forget(lock: HeldLock): void;
}

type State = 'held' | 'released' | 'lost';

/**
 * One acquisition of a lock in Redis, with its watchdog. Created only after the acquire script
 * succeeded, so the watchdog never runs for a lock that was not obtained.
 */
export class HeldLock implements Lock {
  private readonly controller = new AbortController();
  private readonly watchdog: Watchdog;
  private state: State = 'held';
  private ttl: number;
  private deadline: number;
  /** Renewals are numbered so that a slow reply never moves the deadline set by a later one. */
  private renewalsSent = 0;
  private renewalApplied = 0;
  private releasing?: Promise<void>;
  private readonly acquiredAt: number;

  constructor(
    private readonly owner: LockOwner,
    readonly key: string,
    private readonly names: LockRedisKeys,
    private readonly token: string,
    readonly fencingToken: number,
    timing: LockTiming,
    /** When the successful acquire call was sent: the lease is counted from there. */
    attemptStartedAt: number,
  ) {
    this.ttl = timing.ttl;
    this.acquiredAt = attemptStartedAt;
    this.deadline = attemptStartedAt + timing.ttl - driftMargin(timing.ttl);
    this.watchdog = new Watchdog(
      { renew: () => this.renewFromWatchdog(), expire: () => this.lose('expired') },
      timing.renewInterval,
      this.deadline,
      timing.autoRenew,
    );
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get held(): boolean {
    return this.state === 'held' && this.releasing === undefined;
  }

  async extend(ttl?: number): Promise<void> {
    if (ttl !== undefined && (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < MIN_TTL_MS || ttl > MAX_TIMER_MS)) {
      throw new InvalidLockOptionsError('ttl', ttl, `an integer number of milliseconds from ${MIN_TTL_MS} to ${MAX_TIMER_MS}`);
    }
    this.assertHeld();
    const lease = ttl ?? this.ttl;
    await this.renew(lease);
    if (ttl !== undefined && this.state === 'held') {
      this.ttl = ttl;
      this.watchdog.changeInterval(Math.max(1, Math.floor(ttl / 3)));
    }
  }

  release(): Promise<void> {
    this.releasing ??= this.releaseInRedis().catch((error: unknown) => {
      // Let a later release() try again: the lease still ends on its own, but sooner is better.
      this.releasing = undefined;
      throw error;
    });
    return this.releasing;
  }

  /** Application shutdown: tell the holder, then give the lock back. */
  async shutdown(): Promise<void> {
    if (this.state !== 'held') return;
    this.lose('shutdown');
    await this.owner.scripts.release(this.names.lock, this.names.released, this.token);
  }

  private async releaseInRedis(): Promise<void> {
    const wasHeld = this.state === 'held';
    this.watchdog.stop();
    const released = await this.owner.scripts.release(this.names.lock, this.names.released, this.token);
    if (!wasHeld) return;
    if (released) {
      this.state = 'released';
      this.owner.forget(this);
      if (this.owner.listening) this.owner.emit({ type: 'released', key: this.key, fencingToken: this.fencingToken, heldMs: now() - this.acquiredAt, at: Date.now() });
    } else {
      // Taken or expired between two renewals; the work is over, but say so.
      this.lose('refused');
    }
  }

  private async renewFromWatchdog(): Promise<void> {
    try {
      await this.renew(this.ttl);
    } catch (error) {
      if (error instanceof LockLostError || !this.held) return;
      this.owner.logger.warn(
        `Renewal of lock "${this.key}" failed (${(error as Error).message}); retrying until the lease deadline.`,
      );
    }
  }

  private async renew(ttl: number): Promise<void> {
    const startedAt = now();
    if (startedAt >= this.deadline) {
      this.lose('expired');
      this.assertHeld();
    }
    const sequence = ++this.renewalsSent;
    const renewed = await this.owner.scripts.renew(this.names.lock, this.token, ttl);
    this.assertHeld();
    if (!renewed) {
      this.lose('refused');
      this.assertHeld();
    }
    if (sequence > this.renewalApplied) {
      this.renewalApplied = sequence;
      this.deadline = startedAt + ttl - driftMargin(ttl);
      this.watchdog.moveDeadline(this.deadline);
    }
    if (this.owner.listening) this.owner.emit({ type: 'renewed', key: this.key, fencingToken: this.fencingToken, latencyMs: now() - startedAt, at: Date.now() });
  }

  private lose(reason: LockLostReason): void {
    if (this.state !== 'held') return;
    this.state = 'lost';
    this.watchdog.stop();
    const error = new LockLostError(this.key, this.fencingToken, reason);
    if (reason === 'shutdown') {
      this.owner.logger.warn(`Lock "${this.key}" was still held at shutdown; releasing it.`);
    } else {
      this.owner.logger.error(`lock lost during renewal: "${this.key}" (fencing token ${this.fencingToken}): ${error.message}`);
    }
    this.owner.forget(this);
    if (this.owner.listening) this.owner.emit({ type: 'lost', key: this.key, fencingToken: this.fencingToken, reason, heldMs: now() - this.acquiredAt, at: Date.now() });
    this.controller.abort(error);
    if (reason === 'expired' && this.releasing === undefined) {
      // We told the holder it lost the lock; if Redis still has it for us, let others in now.
      this.owner.scripts.release(this.names.lock, this.names.released, this.token).catch(() => undefined);
    }
  }

  private assertHeld(): void {
    if (this.state === 'lost') throw this.controller.signal.reason;
    if (this.state === 'released' || this.releasing !== undefined) {
      throw new RedisLockError(`Lock "${this.key}" was released; acquire it again before extending it.`);
    }
  }
}
