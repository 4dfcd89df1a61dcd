import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, type LockEvent } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { countAttempts } from '../support/mechanism.js';

/**
 * Found by review (rev-a): a multi-key acquire shares one waitTimeout across its keys
 * (docs/lock-family.md, "All or nothing"), and rejects with the error of the key where the wait
 * ran out. That error is the one the single-key acquire of that key made, so its `waitedMs` (and
 * the `not-acquired` event's) counts only from when the call started on that key, not from the
 * call: a caller that waited the whole waitTimeout is told it waited much less.
 */
describe('a multi-key acquire whose wait runs out on a later key', () => {
  for (const backend of useBothStores()) {
    it(`reports the whole call's wait in LockNotAcquiredError.waitedMs (${backend.label})`, async () => {
      const holder = await backend.open({ ttl: 30_000 });
      const caller = await backend.open({ ttl: 30_000 });
      const a = uniqueKey('mk-waited-a');
      const b = uniqueKey('mk-waited-b');
      const heldA = await holder.locks.acquire(a);
      const heldB = await holder.locks.acquire(b);
      const events: LockEvent[] = [];
      const subscription = caller.locks.events$.subscribe((event) => events.push(event));
      const attempts = countAttempts(caller.locks);
      const waitTimeout = 3_000;
      const startedAt = performance.now();
      const call = caller.locks.acquire([a, b], { waitTimeout }).then(
        () => undefined,
        (error: unknown) => error,
      );
      // The call waits on the first key through several refreshes (250 ms each) before it gets it.
      await expect.poll(() => attempts.count, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(5);
      await heldA.release();
      const error = await call;
      const elapsed = performance.now() - startedAt;
      subscription.unsubscribe();
      attempts.stop();
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      expect((error as LockNotAcquiredError).key).toBe(b);
      // The whole call waited its waitTimeout (and more); a single-key acquire reports at least that.
      expect(elapsed).toBeGreaterThanOrEqual(waitTimeout);
      const notAcquired = events.filter((event) => event.type === 'not-acquired');
      expect({ waitedMs: (error as LockNotAcquiredError).waitedMs >= waitTimeout, eventWaitedMs: notAcquired.map((event) => (event as { waitedMs: number }).waitedMs >= waitTimeout) }).toEqual({
        waitedMs: true,
        eventWaitedMs: [true],
      });
      await heldB.release();
    }, 30_000);
  }
});
