import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from './redis-lock.error.js';

/**
 * Why a held lock was lost:
 * - `refused`: Redis no longer holds the lock for this owner (it expired, or was deleted or
 *   taken over behind the holder's back), so a renewal or extension was refused; or Redis refused
 *   the watchdog's renewal in a way asking again cannot change (an ACL without the commands or the
 *   key pattern: NOPERM; EVALSHA renamed; the lock's key holding data of another type, a hash
 *   written there by something else), the error's `cause` saying what to fix: the lease
 *   still in Redis runs out unrenewed;
 * - `expired`: the local lease deadline passed without a successful renewal (Redis or the
 *   network unreachable, the event loop blocked, or auto-renewal switched off; or Redis refusing
 *   the renewals for now, as a server loading its dataset does with LOADING: that refusal is
 *   then the error's `cause`);
 * - `shutdown`: the application shut down while the lock was held;
 * - `stepped-down`: a leader's term ended because the instance stepped down: its
 *   `onLeadershipAcquired` threw (the signal aborts before the lease is given back), or its term
 *   lock was released by hand (after). A term's `signal` aborts with it, and so, at a step-down,
 *   does that of each `using()` and `@Locked` call running inside the term's hooks and
 *   `runAsLeader()` work, told to stop while its own lock stays held.
 */
export type LockLostReason = 'refused' | 'expired' | 'shutdown' | 'stepped-down';

/**
 * The holder no longer owns the lock. It is the `reason` of the lock's aborted
 * `AbortSignal`, and what `extend()` rejects with once the lock is gone.
 *
 * @example
 * ```ts
 * await locks.using('report', async (lock) => {
 *   for (const page of pages) {
 *     lock.signal.throwIfAborted(); // throws LockLostError once the lock is lost
 *     await render(page);
 *   }
 * });
 * ```
 */
export class LockLostError extends RedisLockError {
  constructor(
    /** The lock key as the caller gave it (without the prefix). */
    readonly key: string,
    /** The fencing token of the acquisition that was lost; `undefined` for a lock taken with `fencing: false`. */
    readonly fencingToken: number | undefined,
    /** Why the lock was lost. */
    readonly reason: LockLostReason,
    /**
     * Whether a watchdog renewed the lock (`autoRenew`): an `expired` lease it never renewed ran
     * out on its own, the work outliving the ttl its code chose (`LockConflictInterceptor` leaves
     * that a 500, logged: a retry would run out again), not Redis or the event loop failing it.
     */
    readonly renewed = true,
    /** A renewal's refusal asking again cannot change (NOPERM, an unknown command), kept as the `cause`. */
    refusal?: RedisLockError,
    /**
     * An `expired` lease's last renewal answered, refused by Redis in a way that passes (LOADING,
     * READONLY, BUSY), kept as the `cause`: Redis answered, so the loss does not say it was unreachable.
     */
    refusedForNow?: Error,
  ) {
    const what =
      refusal !== undefined
        ? `Redis refused its renewal for good, and its lease there runs out unrenewed (${refusal.message.replace(/\.$/, '')})`
        : reason === 'expired' && refusedForNow !== undefined
          ? `the lease ran out while Redis refused its renewals for now (${refusedForNow.message.replace(/\.$/, '')})`
          : describe(reason, renewed);
    const cause = refusal ?? (reason === 'expired' ? refusedForNow : undefined);
    super(`Lock ${quoteKey(key)}${fencingToken === undefined ? '' : ` (fencing token ${fencingToken})`} was lost: ${what}.`, cause && { cause });
  }
}

function describe(reason: LockLostReason, renewed: boolean): string {
  switch (reason) {
    case 'refused':
      return renewed
        ? 'Redis refused the renewal because the lock is no longer held by this owner'
        : 'Redis no longer holds the lock for this owner (found by its release or extend(); it was taken with autoRenew: false)';
    case 'expired':
      return renewed
        ? 'the lease ran out before a renewal succeeded (Redis unreachable or the event loop blocked)'
        : "its ttl ran out while it was held (autoRenew: false: only extend() renews it); raise its ttl above the work's length, call extend() while it works, or leave autoRenew on";
    case 'shutdown':
      return 'the application shut down while the lock was held';
    case 'stepped-down':
      return 'the leader stepped down';
  }
}
