import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { LockLostError } from '../lib/index.js';
import { useLockApps } from './support/lock-app.js';
import { blockEventLoop, leaseDeadline } from './support/mechanism.js';
import { useRedis } from './support/redis.js';

/**
 * Review (engine, holding side).
 *
 * Promise (docs/locks.md: `extend(ttl?)` "renew now; with `ttl`, the lease is `ttl` long from
 * now on"; `held`/`current()`: a lock whose local lease deadline passed while the event loop was
 * stalled is reported lost, never as held; held-lock.ts `beginRenewal`: "never keep it
 * silently"; an acquire whose reply came after its lease ran out is never handed out,
 * lock-manager.ts `attempt`).
 *
 * Behaviour: `extend()` checks the lease deadline only when it sends the renewal
 * (`beginRenewal`). When the reply is applied (`completeRenewal`), the new deadline is counted
 * from the send, as it must be, but after it `extend()` checks only the lock's state
 * (`assertHeld`, held-lock.ts:158), not that deadline: a stall between the send and the reply
 * (GC pause, CPU-bound call) longer than the new lease lets `extend()` resolve, telling the
 * caller the lock was extended, although its new lease has already run out (in Redis too:
 * it ran from before the stall). The caller then works under a lock another process may hold.
 * (`renewNow()` does it right: it returns `renewed === true && this.held`.)
 *
 * Here: a 10 s lock, extend(1 s), and the event loop blocked for 1.5 s while the renewal's
 * reply is on its way. extend() resolves; the lock's deadline is already 0.5 s in the past.
 */
describe('review: extend() whose reply comes after its new lease ran out', () => {
  useRedis();
  const app = useLockApps();

  it('does not resolve as extended once the lease it set has run out locally', async () => {
    const { locks } = await app({ ttl: 10_000 });
    const lock = await locks.acquire('extend-after-stall');
    const extended = lock.extend(1_000);
    // The renewal is on its way (its lease counts from before this); the process stalls.
    blockEventLoop(1_500);
    const outcome = await extended.then(
      () => 'extended' as const,
      (error: unknown) => error,
    );
    // The lease the extension set (1 s from before the stall) is over by the time it resolves.
    const overdue = performance.now() >= leaseDeadline(lock);
    expect(overdue).toBe(true);
    // An extension whose lease already ran out must not be reported as a success.
    expect(outcome).toBeInstanceOf(LockLostError);
    expect(lock.held).toBe(false);
  });
});
