/**
 * Found by review (thirty-ninth session): with Redis frozen (SIGSTOP here; a network cut that
 * resets nothing looks the same), `tryAcquire("k")` rejected after its 1 s grace with "Redis did
 * not answer the acquire of lock "k" within 1000 ms.": neither the call nor, for a multi-key call,
 * that the key was one of a list, while `isLocked()` and `inspect()` on the same Redis named
 * theirs; and a route awaiting it answered 500 with an error log where theirs answer 503. It now
 * rejects as they do: `tryAcquire("k"): Redis did not answer within 1000 ms.` (`tryAcquire(keys),
 * key "k": ...` for a part of a list), the key quoted, escaped and cut as everywhere (it is user
 * input), and marked as unanswered (LockConflictInterceptor answers 503). A silence has no
 * underlying error to keep as `cause`; a client's error (a command timeout, a closed connection)
 * is kept as it was (test/api/store-errors-are-redis-lock-errors.spec.ts).
 */
import { describe, expect, it } from 'vitest';
import { RedisLockError, type LockService } from '../../lib/index.js';
import { isUnansweredRead } from '../../lib/core/engine/unanswered.js';
import { createLockApp } from '../support/lock-app.js';
import { useFrozenRedis } from '../support/frozen-redis.js';

describe('tryAcquire() on a Redis that does not answer', () => {
  // Its own server, since it is frozen.
  const own = useFrozenRedis();

  const hostile = `frozen:\u202e${'x'.repeat(900)}\nFAKE LOG LINE`;
  const calls: [string, RegExp, (locks: LockService) => Promise<unknown>][] = [
    ['a lock', /^tryAcquire\("frozen:a"\): Redis did not answer within \d+ ms\.$/, (locks) => locks.tryAcquire('frozen:a')],
    ['a read lock', /^tryAcquire\("frozen:r"\): Redis did not answer within \d+ ms\.$/, (locks) => locks.tryAcquire('frozen:r', { mode: 'read' })],
    ['a semaphore', /^tryAcquire\("frozen:s"\): Redis did not answer within \d+ ms\.$/, (locks) => locks.tryAcquire('frozen:s', { limit: 3 })],
    ['a list of keys', /^tryAcquire\(keys\), key "frozen:k1": Redis did not answer within \d+ ms\.$/, (locks) => locks.tryAcquire(['frozen:k2', 'frozen:k1'])],
    ['a hostile key', /^tryAcquire\("frozen:\\u202ex{192}…"\): Redis did not answer within \d+ ms\.$/, (locks) => locks.tryAcquire(hostile)],
  ];

  it('rejects naming the call and its key, bounded and escaped, as unanswered', async () => {
    const app = own.opened(await createLockApp({ redis: own.url(), shutdownTimeout: '100ms' }));
    // Answered while Redis answers (and its scripts loaded).
    await (await app.locks.tryAcquire('warm'))!.release();
    own.server().pause();
    const errors = await Promise.all(calls.map(([, , call]) => call(app.locks).then(() => undefined, (error: unknown) => error as Error)));
    expect(errors.map((error) => ({ lockError: error instanceof RedisLockError, unanswered: isUnansweredRead(error), message: error?.message }))).toEqual(
      calls.map(([, message]) => ({ lockError: true, unanswered: true, message: expect.stringMatching(message) })),
    );
  });
});
