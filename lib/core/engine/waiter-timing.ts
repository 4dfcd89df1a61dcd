/**
 * A waiter retries at least this often, even without a release message: that refreshes its
 * place in the queue and covers messages lost to a reconnection.
 */
export const WAITER_REFRESH_MS = 250;

/**
 * A waiter that stopped refreshing (crashed, frozen) loses its place in the queue after this,
 * and a lock handed to a waiter starts on a lease this long (the waiter renews it to its ttl at
 * once), so a waiter that dies first in line delays the lock by at most this.
 */
export const WAITER_LEASE_MS = 4 * WAITER_REFRESH_MS;

/**
 * How long the last attempt of a wait may take even when the wait's time is up, so that a
 * healthy Redis answering a little late still counts.
 */
export const LAST_ATTEMPT_GRACE_MS = 1_000;
