import type { Lock } from '../../interfaces/lock.interface.js';
import { MultiLock } from '../multi-key/multi-key-lock.js';
import type { Clock } from '../time/clock.js';
import { HeldLock } from './held-lock.js';
import { ReentrantLock } from './reentrant-lock.js';

/**
 * Whether `lock` may still be acted on: held, and its local lease deadline not passed. A lock
 * whose deadline passed while the event loop was stalled (a GC pause, a CPU-bound call,
 * SIGSTOP) is reported lost here and now (`expired`: its signal aborts, it is given back),
 * rather than when the deadline sweeper's timer gets its turn, which may be after the caller
 * has started work under a lease another process may already hold.
 *
 * Every place that starts user code under a held lock asks this first: `using()`, `@Locked`,
 * `current()`, the job runs and the leader's hooks (re-entry checks its outer lock the same way).
 */
export function leaseLive(lock: Lock, clock: Clock): boolean {
  if (lock instanceof MultiLock) {
    let live = true;
    for (const part of lock.parts) live = leaseLive(part, clock) && live;
    return live;
  }
  if (lock instanceof HeldLock && lock.held && clock.now() >= lock.deadline) lock.expire();
  // A handle on a lock held further out (a re-entry, a job run's view of its owner lease): that lock's deadline.
  if (lock instanceof ReentrantLock) return !lock.released && leaseLive(lock.outer, clock);
  return lock.held !== false;
}
