// docs/locks.md: "A wait that shutdown ends rejects with `LockNotAcquiredError`, its `cause` a
// `RedisLockError` saying that `LockService` shut down" (fix 14b76a2: a route's request then
// gets 503 from the interceptor, not a 500 and an error log); `tryAcquire`: "a Redis error
// rejects". A tryAcquire() whose one attempt is on its way when app.close() begins is ended by
// shutdown too (replyWaits.end(shutdown reason)), but LockManager.tryAcquire rethrows that reason
// as is: a plain RedisLockError "... while waiting for a lock", neither a Redis error nor a
// LockNotAcquiredError, with no key. A route handler calling tryAcquire() answers 500 at every
// rolling deploy, which the fix set out to end for acquire(). The not-acquired event says 'error'.
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../../lib/index.js';
import { LAST_ATTEMPT_GRACE_MS } from '../../lib/core/engine/waiter-timing.js';
import { blockRedis } from '../support/block-redis.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('a tryAcquire() in flight when the application closes', () => {
  const { url } = useOwnRedis();

  it('rejects with LockNotAcquiredError (cause: shut down), as acquire() does', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: url() });
    await app.locks.isLocked('s15f-try-warm'); // connection ready, scripts loaded
    const { ended } = await blockRedis(url(), LAST_ATTEMPT_GRACE_MS * 4);
    const trying = app.locks.tryAcquire('s15f-try-shutdown').then(
      (lock) => ({ lock }),
      (error: unknown) => ({ error }),
    );
    await app.close();
    const outcome = await trying;
    await ended;
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(error).toBeInstanceOf(RedisLockError);
    expect({ class: (error as Error).constructor.name, message: (error as Error).message }).toEqual({
      class: 'LockNotAcquiredError',
      message: expect.stringContaining('was not acquired: LockService shut down'),
    });
    expect(error).toBeInstanceOf(LockNotAcquiredError);
  });
});
