/**
 * Defect: the `lost` event is emitted before the lock's `signal` is aborted, while its TSDoc says
 * "The lock was lost while held; the lock's signal has been aborted". A subscriber of `events$`
 * (or of the `nestjs-redis-lock:lost` diagnostics channel) that reacts to the event by looking
 * at the lock (to stop the work tied to it, to tell a lock lost from one released, to read
 * `signal.reason` for the cause) finds its signal not aborted and no reason yet.
 *
 * Promise: lib/interfaces/lock-event.interface.ts `LockLostEvent`: "the lock's signal has been
 * aborted"; docs/observability.md: each diagnostics message "is the LockEvent of events$".
 *
 * Code at fault: lib/core/engine/held-lock.ts `lose()`: `this.report(reason, error)` (which emits
 * the event) runs before `controller.abort(error)`.
 */
import { describe, expect, it } from 'vitest';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { LOCK_DIAGNOSTICS_CHANNELS, LockLostError, type Lock } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('the lost event', () => {
  const redis = useRedis();
  const app = useLockApps();

  it("comes after the lock's signal aborted, as its TSDoc says (events$ and diagnostics channel)", async () => {
    const { locks } = await app();
    let lock: Lock | undefined;
    const seen: { via: string; aborted: boolean; reason: unknown }[] = [];
    const onChannel = (): void => void seen.push({ via: 'channel', aborted: lock!.signal.aborted, reason: lock!.signal.reason });
    subscribe(LOCK_DIAGNOSTICS_CHANNELS.lost, onChannel);
    const subscription = locks.events$.subscribe((event) => {
      if (event.type === 'lost') seen.push({ via: 'events$', aborted: lock!.signal.aborted, reason: lock!.signal.reason });
    });
    try {
      lock = await locks.acquire('lost-order:1', { ttl: 2_000 });
      // Someone else deletes it: extend() is refused, the lock is lost.
      await redis.del('lock:{lost-order:1}');
      await lock.extend().catch(() => undefined);
      expect(lock.signal.aborted).toBe(true);
      expect(seen.map((entry) => entry.via)).toEqual(['events$', 'channel']);
      // Fails: both saw { aborted: false, reason: undefined }.
      for (const entry of seen) {
        expect(entry.aborted).toBe(true);
        expect(entry.reason).toBeInstanceOf(LockLostError);
      }
    } finally {
      subscription.unsubscribe();
      unsubscribe(LOCK_DIAGNOSTICS_CHANNELS.lost, onChannel);
    }
  });
});
