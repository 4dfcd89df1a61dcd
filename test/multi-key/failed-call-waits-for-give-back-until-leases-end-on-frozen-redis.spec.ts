/**
 * Found by review. A multi-key `acquire()` that fails after taking its first keys (the caller's
 * signal aborts, its `waitTimeout` runs out on a later key) gives what it took back before it
 * rejects. When Redis stopped answering meanwhile (frozen, a network cut that resets nothing),
 * that give-back is a held lock's release, which waits for its answer until the lease ends: the
 * call rejected only then, a whole ttl after the caller's abort or past its waitTimeout (a minute
 * with `ttl: 60_000`), where a single key's call rejects at once. The call now waits for the
 * give-back a last attempt's grace at most; the releases go on, and free the keys once Redis
 * answers.
 */
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { useFrozenRedis } from '../support/frozen-redis.js';
import { createLockApp } from '../support/lock-app.js';
import { settledRecord } from '../support/mechanism.js';

// Far above every poll below: a call that waits for the leases to end cannot settle within them.
const TTL = 60_000;

describe('a multi-key acquire() that fails after taking a key while Redis does not answer', () => {
  const { url, server, opened } = useFrozenRedis();

  const cases = [
    { name: 'its signal aborts', mode: 'write', ends: 'abort' },
    { name: 'its signal aborts (read locks)', mode: 'read', ends: 'abort' },
    { name: 'its waitTimeout runs out', mode: 'write', ends: 'waitTimeout' },
  ] as const;
  for (const { name, mode, ends } of cases) {
    it(`rejects while Redis is still frozen when ${name}, and the key it took is freed once Redis answers`, { timeout: 60_000 }, async () => {
      const holder = opened(await createLockApp({ redis: url(), ttl: TTL }));
      const app = opened(await createLockApp({ redis: url(), ttl: TTL }));
      const busy = await holder.locks.acquire('frozen-give-back-b', { mode: 'write' });
      const controller = new AbortController();
      const call = settledRecord(
        app.locks.acquire(['frozen-give-back-a', 'frozen-give-back-b'], { mode, signal: controller.signal, waitTimeout: ends === 'abort' ? TTL : 2_000 }),
      );
      // The first key is taken; the call waits for the second.
      await expect.poll(() => holder.locks.isLocked('frozen-give-back-a')).toBe(true);
      expect(call.settled).toBeUndefined();
      server().pause();
      if (ends === 'abort') controller.abort(new Error('caller gave up'));
      // Settled with Redis frozen: the call did not wait for the give-back's answer.
      await expect.poll(() => call.settled !== undefined).toBe(true);
      const error = call.settled!.error as Error;
      if (ends === 'abort') expect(error.message).toBe('caller gave up');
      else expect(error).toBeInstanceOf(LockNotAcquiredError);
      server().resume();
      // The give-back went on: the key is free long before its lease would end.
      await expect.poll(() => holder.locks.isLocked('frozen-give-back-a')).toBe(false);
      await busy.release();
    });
  }

  it('rejects a tryAcquire() while Redis is still frozen when it froze before the later key was answered, and frees the key it took once Redis answers', { timeout: 60_000 }, async () => {
    const holder = opened(await createLockApp({ redis: url(), ttl: TTL }));
    const app = opened(await createLockApp({ redis: url(), ttl: TTL }));
    // Redis freezes as the attempt of the second key goes out, after the first key was taken.
    const manager = app.locks[LOCK_RUNNER] as unknown as { attempt: (key: string, ...rest: unknown[]) => unknown };
    const attempt = manager.attempt.bind(manager);
    manager.attempt = (key, ...rest) => {
      if (key === 'frozen-give-back-b') server().pause();
      return attempt(key, ...rest);
    };
    const call = settledRecord(app.locks.tryAcquire(['frozen-give-back-a', 'frozen-give-back-b']));
    await expect.poll(() => call.settled !== undefined).toBe(true);
    expect(call.settled!.error).toBeInstanceOf(RedisLockError);
    server().resume();
    await expect.poll(() => holder.locks.isLocked('frozen-give-back-a')).toBe(false);
  });
});
