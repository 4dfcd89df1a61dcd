/**
 * docs/locks.md, `release()`: a release Redis did not answer "(... or no answer by the end of the
 * lease, as from a frozen server ...) rejects with a RedisLockError"; test/holder/release-frozen-redis.spec.ts:
 * "It must still settle, at the latest when the lease it ends would have run out, so that
 * `finally { await lock.release() }`, `using()` and a `@Locked` route do not hang for as long as
 * Redis is gone."
 *
 * A lock lost to its lease running out (Redis frozen: no renewal answered) has no lease left, yet
 * its holder's release() waits a whole ttl more (HeldLock.releaseInRedis, the `!wasHeld` branch:
 * `deadline = now + ttl`): using() returns, and a @Locked route answers, a full ttl after the
 * function ended and after the loss (30 s with the default ttl), while a lock still held when its
 * function ended is given its answer by the end of its lease.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('using() whose lock was lost to a frozen Redis', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    own.server().resume();
    await app?.close();
    app = undefined;
  });

  it('returns by the release grace after its function ended on the loss, not a whole ttl later', { timeout: 30_000 }, async () => {
    const ttl = 3_000;
    app = await createLockApp({ redis: own.url(), ttl });
    let frozen = true;
    const call = app.locks.using('lost:frozen', async (lock) => {
      own.server().pause();
      // The holder stops as soon as it is told the lock is lost (its lease ran out unrenewed).
      await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
      // Redis comes back well after a last attempt's grace (1 s) and well before another ttl.
      setTimeout(() => {
        frozen = false;
        own.server().resume();
      }, 2_500);
      return 'stopped';
    });
    expect(await call).toBe('stopped');
    // Before: the release of the lost lock waited a whole ttl more, so using() returned only once
    // Redis answered it. A held lock's release gets at most its lease's rest (at least a 1 s
    // grace); a lost one has no lease left, and is sent again in the background.
    expect({ returnedWhileRedisFrozen: frozen }).toEqual({ returnedWhileRedisFrozen: true });
  });
});
