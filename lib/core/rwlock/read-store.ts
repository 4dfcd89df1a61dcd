import type { AcquireReply, ReleaseReply } from '../stores/lock-replies.js';
import type { ReadKeys } from './read-keys.js';

/**
 * The read side of read-write locks, beside a `LockStore` whose plain locks are the write
 * side (and whose `renew` renews readers' keys too). Absent where read locks are not
 * supported (quorum mode).
 */
export interface ReadStore {
  acquire(keys: ReadKeys, token: string, ttl: number, enqueue: boolean, waiterLease: number): Promise<AcquireReply>;
  release(keys: ReadKeys, token: string, waiterLease: number): Promise<ReleaseReply>;
  leave(keys: ReadKeys, token: string, ttl: number, waiterLease: number): Promise<void>;
}
