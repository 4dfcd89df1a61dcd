import type { AcquireReply, Grant, ReleaseReply } from '../stores/lock-replies.js';
import type { SemaphoreKeys } from './semaphore-keys.js';

/** A semaphore acquire: the lock store's reply, or the limit the semaphore is in use with. */
export type SemaphoreAcquireReply = AcquireReply | { acquired: false; pttl: number; limitInUse: number };

/** A release of a permit, which may go to several waiters at once. */
export interface SemaphoreReleaseReply extends ReleaseReply {
  grants: Grant[];
}

/**
 * The counting semaphore's protocol, beside a `LockStore` (whose `renew` and `renewBatch`
 * also renew permits: a permit is a key holding its owner token). Absent from stores that do
 * not support semaphores (quorum mode).
 */
export interface SemaphoreStore {
  acquire(keys: SemaphoreKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<SemaphoreAcquireReply>;
  release(keys: SemaphoreKeys, token: string, waiterLease: number): Promise<SemaphoreReleaseReply>;
  leave(keys: SemaphoreKeys, token: string, ttl: number, waiterLease: number): Promise<void>;
}

/** Pairs `[token, fencing, token, fencing...]` as the release script returns them. */
export function toGrants(flat: (string | number)[]): Grant[] {
  const grants: Grant[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) grants.push({ token: String(flat[i]), fencingToken: Number(flat[i + 1]) });
  return grants;
}
