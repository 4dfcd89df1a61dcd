import { config } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (rv31, observability). `LockManager.emit()` (lib/core/engine/lock-manager.ts) calls
 * `this.events.next(event)` inside the engine's own paths (`acquired()`, a release's end, ...).
 * RxJS reports a subscriber's error asynchronously by default, but under its (deprecated, still
 * supported in RxJS 7) `config.useDeprecatedSynchronousErrorHandling` the error is thrown out of
 * `next()`, into the engine: an `events$` subscriber with a bug on `acquired` then fails every
 * acquisition of the process; each attempt takes the lock in Redis, gives it back, and retries
 * until `waitTimeout`, and the call ends with LockNotAcquiredError saying "Redis did not answer
 * (<the subscriber's message>)". A listener must never decide whether a lock is had.
 */
describe('an events$ subscriber that throws (RxJS synchronous error handling)', () => {
  useRedis();
  const app = useLockApps();
  afterEach(() => {
    config.useDeprecatedSynchronousErrorHandling = false;
  });

  it('does not fail the acquisition, nor blame Redis for it', async () => {
    const { locks } = await app();
    config.useDeprecatedSynchronousErrorHandling = true;
    const subscription = locks.events$.subscribe((event) => {
      if (event.type === 'acquired') throw new Error('bug in an events$ subscriber');
    });
    try {
      const lock = await locks.acquire('subscriber-bug', { waitTimeout: 1_000 });
      expect(lock.held).toBe(true);
      await lock.release();
    } finally {
      subscription.unsubscribe();
    }
  });

  // Found by review (forty-third session, beside the leader hooks' same fault): the catch that
  // logs the subscriber's failure described it with String(), which throws for a value without a
  // prototype (an RPC or validation library's error payload): the acquisition failed as before.
  it('nor when what it throws has no prototype, and logs it', async () => {
    const { locks, logs } = await app();
    config.useDeprecatedSynchronousErrorHandling = true;
    const subscription = locks.events$.subscribe((event) => {
      if (event.type === 'acquired') throw Object.assign(Object.create(null), { code: 'E_BARE' });
    });
    try {
      const lock = await locks.acquire('subscriber-bare-object', { waitTimeout: 1_000 });
      expect(lock.held).toBe(true);
      await lock.release();
      expect(logs.lines.some((line) => line.level === 'error' && line.message.startsWith("An events$ subscriber threw on a 'acquired' event: [object Object]"))).toBe(true);
    } finally {
      subscription.unsubscribe();
    }
  });
});
