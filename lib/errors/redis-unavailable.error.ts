import { RedisLockError } from './redis-lock.error.js';

/**
 * Redis could not serve a call for now, in a way that passes: it did not answer within the call's
 * bound (`RedisUnansweredError`, a kind of this one), its connection was refused, reset or is down
 * and the client fails fast meanwhile (ioredis `enableOfflineQueue: false` or `maxRetriesPerRequest`
 * spent, node-redis `disableOfflineQueue`, a client's command timeout), or it answered with a
 * refusal a failover, a restart or a long script gives for a while (`LOADING`, `READONLY`,
 * `MASTERDOWN`, `TRYAGAIN`, `CLUSTERDOWN`, `BUSY`), or its grant reached a `tryAcquire()` after
 * the lease it started had run out here (given back). `isLocked()`, `inspect()`, `tryAcquire()` and
 * `extend()` reject with it, and a `FencedRedis` write or read for update its client refused unsent
 * for want of a connection, or that Redis refused so (nothing was written). Asking again later may succeed;
 * `LockConflictInterceptor` answers it 503 with `Retry-After`. What asking again cannot cure (a
 * closed client, NOPERM, a renamed command, data of another kind under the key) is a plain
 * `RedisLockError` saying what to fix, and answered 500. The client's error is the `cause`.
 *
 * @example
 * ```ts
 * try {
 *   return await locks.isLocked('report');
 * } catch (error) {
 *   if (error instanceof RedisUnavailableError) return undefined; // unknown for now: Redis cannot be asked
 *   throw error;
 * }
 * ```
 */
export class RedisUnavailableError extends RedisLockError {}
