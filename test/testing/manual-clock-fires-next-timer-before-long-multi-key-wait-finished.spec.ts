/**
 * Found by review: ManualClock.advance() let a fixed 20 event-loop turns pass after each timer it
 * fired, not until the work that timer started had finished. A multi-key acquisition takes its
 * keys one store call after the other (one turn each), so one woken for its last key with tens
 * of keys still to take was cut off: the clock jumped on to the next timer (its own waitTimeout)
 * and the call failed with LockNotAcquiredError, where the same test on real time gets the lock
 * at the holder's deadline. docs/testing.md promises the work each timer starts finishes first.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { useTestingApps } from '../support/testing-apps.js';

describe('ManualClock.advance() and work that takes many store calls', () => {
  const open = useTestingApps();

  it('lets a multi-key acquisition take all its keys before the next timer fires', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const [holder, waiter] = [await open(store), await open(store)];
    const keys = Array.from({ length: 100 }, (_, i) => `many:${String(i).padStart(3, '0')}`);
    // The last key in the canonical order: the waiter takes the 99 others, then waits for it.
    await holder.acquire(keys.at(-1)!, { ttl: '1s', autoRenew: false });
    let gotAt: number | undefined;
    const outcome = waiter.acquire(keys, { waitTimeout: '5s' }).then(
      (lock) => {
        gotAt = store.clock.now();
        return lock.keys.length;
      },
      (error: Error) => `${error.name} at ${store.clock.now()} ms`,
    );
    await store.manualClock.advance('5s');
    expect(await outcome).toBe(100);
    // Taken once the holder's lease ended, well before the wait would have run out.
    expect(gotAt).toBeLessThanOrEqual(1_000);
  });

  it('lets a multi-key acquisition started before advance() finish within it', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const locks = await open(store);
    const keys = Array.from({ length: 100 }, (_, i) => `free:${String(i).padStart(3, '0')}`);
    let taken = 0;
    void locks.acquire(keys).then((lock) => (taken = lock.keys.length));
    await store.manualClock.advance('1ms');
    expect(taken).toBe(100);
  });
});
