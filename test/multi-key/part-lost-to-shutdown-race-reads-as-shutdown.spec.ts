/**
 * Found by review (s48). A multi-key call that took its last key as `app.close()` began (the close
 * came between that key's reply and the call's next step) found its first key lost to the
 * shutdown, which gives every held lock back. It read that loss as any other: `acquire(keys)`
 * past its wait (`waitTimeout: 0`) rejected with a `LockNotAcquiredError` whose cause is the
 * key's `LockLostError` (`shutdown`), which the interceptor answers as a Redis that did not
 * answer (503 with `Retry-After`: "the lock service is unavailable"); with wait left it asked
 * again and was refused as a call made after the close; `tryAcquire(keys)` rejected with a plain
 * `RedisLockError` saying the key "ran out of its lease (shutdown)" (a 500, logged). A call
 * whose wait shutdown ends, one key's or a multi-key one's a moment earlier, rejects with a
 * `LockNotAcquiredError` whose cause is the `LockServiceClosedError` (the application closing:
 * 503 without `Retry-After`); so do these now, and give every key back.
 */
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockServiceClosedError, RedisLockError, type LockService } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

const UNESCAPED = /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

describe('a multi-key call whose last key is taken as the application closes', () => {
  const redis = useRedis();

  const calls: [string, (locks: LockService, keys: string[]) => Promise<unknown>][] = [
    ['acquire(keys) that cannot wait', (locks, keys) => locks.acquire(keys, { waitTimeout: 0 })],
    ['acquire(keys) with wait left', (locks, keys) => locks.acquire(keys, { waitTimeout: 20_000 })],
    ['tryAcquire(keys)', (locks, keys) => locks.tryAcquire(keys)],
  ];
  for (const [label, call] of calls) {
    it(`${label} rejects as the shutdown ended it, not as Redis unavailable`, { timeout: 30_000 }, async () => {
      const app = await createLockApp();
      try {
        // A key with a line separator and a bidi override: shown escaped in the error.
        const keys = ['mk-close-race:a\u2028forged\u202e', 'mk-close-race:b'];
        const closing = app.locks.events$.subscribe((event) => {
          // The last key is the call's, its reply read: the close begins before the call's next step.
          if (event.type === 'acquired' && event.key === keys[1]) void app.locks.beforeApplicationShutdown();
        });
        const outcome = await call(app.locks, keys).then(
          (lock) => lock,
          (error: unknown) => error,
        );
        closing.unsubscribe();
        expect(outcome).toBeInstanceOf(LockNotAcquiredError);
        expect((outcome as LockNotAcquiredError).cause).toBeInstanceOf(LockServiceClosedError);
        expect((outcome as RedisLockError).message).toContain('LockService shut down (the application is closing)');
        expect((outcome as RedisLockError).message).not.toMatch(UNESCAPED);
        await app.close();
        expect(await redis.exists(`lock:{${keys[0]}}`, `lock:{${keys[1]}}`)).toBe(0);
      } finally {
        await app.close();
      }
    });
  }
});
