/**
 * Found by review (forty-first session). After `app.close()` every call of `LockService` was
 * refused with one message, "LockService is shut down (the application is closing); no new locks
 * can be taken.", naming no call: a log line of a route or a job that called it after the close
 * did not say which call failed, nor on which key, and `isLocked()` and `inspect()`, which take
 * no lock, were told that no new locks can be taken. Each refusal now names the call and its key
 * (quoted, as everywhere else a key is shown) and says what it would have done.
 */
import { describe, expect, it } from 'vitest';
import { LockServiceClosedError, type LockService } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { useRedis } from '../support/redis.js';

const refusal = (call: Promise<unknown>): Promise<Error> =>
  call.then(
    () => {
      throw new Error('the call was not refused');
    },
    (error: unknown) => error as Error,
  );

describe.each(['redis', 'memory'] as const)('a call after app.close() (%s store)', (label) => {
  useRedis();
  const store = useBothStores().find((backend) => backend.label === label)!;

  const calls: [string, (locks: LockService) => Promise<unknown>, RegExp][] = [
    ['acquire("closed:k")', (locks) => locks.acquire('closed:k'), /no new locks can be taken/],
    ['tryAcquire("closed:k")', (locks) => locks.tryAcquire('closed:k'), /no new locks can be taken/],
    ['using("closed:k", fn)', (locks) => locks.using('closed:k', () => undefined), /no new locks can be taken/],
    ['acquire(keys)', (locks) => locks.acquire(['closed:a', 'closed:b']), /no new locks can be taken/],
    ['tryAcquire(keys)', (locks) => locks.tryAcquire(['closed:a', 'closed:b']), /no new locks can be taken/],
    ['using(keys)', (locks) => locks.using(['closed:a', 'closed:b'], () => undefined), /no new locks can be taken/],
    ['isLocked("closed:k")', (locks) => locks.isLocked('closed:k'), /Redis is no longer asked/],
    ['inspect("closed:k")', (locks) => locks.inspect('closed:k'), /Redis is no longer asked/],
  ];

  it.each(calls)('%s is refused naming the call, with what it would have done', async (named, call, says) => {
    const app = await store.open();
    await app.close();
    const { locks } = app;
    const error = await refusal(call(locks));
    expect(error).toBeInstanceOf(LockServiceClosedError);
    const opening = `${named}: LockService is shut down (the application is closing)`;
    expect(error.message.slice(0, opening.length)).toBe(opening);
    expect(error.message).toMatch(says);
  });

  it('shows a key from user input quoted and cut, as other errors do', async () => {
    const app = await store.open();
    await app.close();
    const { locks } = app;
    const error = await refusal(locks.acquire(`closed:\n${'x'.repeat(500)}`));
    expect(error.message).not.toContain('\n');
    expect(error.message.length).toBeLessThan(400);
  });
});
