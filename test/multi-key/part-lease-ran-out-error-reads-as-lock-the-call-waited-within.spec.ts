import { describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * A review's suspicion (forty-fourth session), confirmed. A multi-key `acquire()` whose first key
 * ran out of its lease while the call took a later one (the process stalled past the ttl), with
 * its waitTimeout gone by then, rejects with `LockNotAcquiredError` whose `cause` is that key's
 * `LockLostError` (docs/lock-family.md). Its message read `Lock "acct:a" was not acquired: the
 * lock its call waited within ended after ... ms of waiting`: the words for a lock of the call's
 * chain (an outer `using()`, a job's run lock) that ended, where there was none. It now says the
 * call took that key and lost it while it took the others.
 */
describe('a multi-key acquire() whose first key ran out of its lease while a later key was taken', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('rejects saying the call lost its own key, not that a lock it waited within ended', async () => {
    const { locks } = await app({ ttl: 300, renewInterval: 100 });
    // Connected and its scripts loaded: only the stall below takes time.
    await (await locks.acquire('warm-up')).release();
    let stalled = false;
    const stallAfterFirst = locks.events$.subscribe((event) => {
      if (event.type !== 'acquired' || event.key !== 'acct:a' || stalled) return;
      // The first key is in; the process stalls (a long GC pause, a blocked event loop) past its
      // lease and past the call's waitTimeout before it asks for the second.
      stalled = true;
      const until = Date.now() + 450;
      while (Date.now() < until);
    });
    const error = await locks.acquire(['acct:a', 'acct:b'], { waitTimeout: 200 }).then(
      (lock) => lock,
      (e: unknown) => e,
    );
    stallAfterFirst.unsubscribe();
    expect(stalled).toBe(true);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    const { message, cause } = error as LockNotAcquiredError;
    expect(cause).toBeInstanceOf(LockLostError);
    expect((cause as LockLostError).reason).toBe('expired');
    expect(message).not.toContain('waited within');
    expect(message).toMatch(/^Lock "acct:a" was not acquired: the call took it, then lost it while it took its other keys, after \d+ ms of waiting \(Lock "acct:a".* was lost: the lease ran out/);
    await expect.poll(() => redis.exists('lock:{acct:a}', 'lock:{acct:b}')).toBe(0);
  });
});
