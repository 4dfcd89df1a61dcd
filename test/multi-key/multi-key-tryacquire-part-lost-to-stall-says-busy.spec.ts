/**
 * Found by review (fixes, 6195c39). The fix made a single-key tryAcquire() whose grant came back
 * after its lease reject instead of answering null, since null says "another holder has it"
 * (LockService.tryAcquire: "the lock, or `null` when another holder has it"), which a job took
 * for a run elsewhere. The multi-key tryAcquire (lib/core/multi-key/acquire-all.ts tryAcquireAll)
 * still answers null when a part it took earlier lost its lease during a stall while later keys
 * were tried, "as one key's attempt answers a reply that came after its lease" (its doc comment,
 * no longer true): every key is free, nobody else holds any, and the caller is told "busy".
 * The stall here is an events$ subscriber busy for longer than the 300 ms lease on the first
 * part's `acquired` event (any CPU-bound work of the process does the same).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';

describe('multi-key tryAcquire() whose first part lost its lease to a stall', () => {
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('does not answer null (busy) for keys nobody else holds', { timeout: 20_000 }, async () => {
    app = await createLockApp({ ttl: 300 });
    const { locks } = app;
    const subscription = locks.events$.subscribe((event) => {
      if (event.type !== 'acquired' || event.key !== 'mk-stall:a') return;
      const until = performance.now() + 600;
      while (performance.now() < until);
    });
    const outcome = await locks.tryAcquire(['mk-stall:a', 'mk-stall:b']).then(
      (lock) => (lock === null ? 'null (busy)' : (void lock.release(), 'acquired')),
      (error: Error) => `rejected: ${error.name}`,
    );
    subscription.unsubscribe();
    // Nobody else holds either key.
    expect(await locks.isLocked('mk-stall:a')).toBe(false);
    expect(outcome).not.toBe('null (busy)');
  });
});
