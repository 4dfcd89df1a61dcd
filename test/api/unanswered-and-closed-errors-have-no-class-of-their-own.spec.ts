/**
 * Found by review (thirty-ninth session). A call Redis did not answer within its bound
 * (`isLocked()`, `inspect()`, `tryAcquire()`) and a call refused or a wait ended because the
 * application was closing rejected with plain `RedisLockError`s: a user's exception filter or
 * retry could tell them from each other, and from a lost lock or a bad reply, only by their
 * message, while the library's own interceptor told them apart (503) by a private mark. They are
 * now classes of their own, `RedisUnansweredError` and `LockServiceClosedError` (both still
 * `RedisLockError`s).
 */
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockServiceClosedError, RedisLockError, RedisUnansweredError } from '../../lib/index.js';
import { createLockApp, nextEvent } from '../support/lock-app.js';
import { useFrozenRedis } from '../support/frozen-redis.js';

describe('the errors of a Redis that does not answer and of a closing LockService', () => {
  const own = useFrozenRedis();

  it('are RedisUnansweredError for calls Redis left unanswered', async () => {
    const app = own.opened(await createLockApp({ redis: own.url(), shutdownTimeout: '100ms' }));
    await (await app.locks.acquire('classes:warm')).release();
    own.server().pause();
    const errors = await Promise.all([app.locks.isLocked('classes:a'), app.locks.inspect('classes:a'), app.locks.tryAcquire('classes:a')].map((call) => call.then(() => undefined, (error: unknown) => error)));
    for (const error of errors) {
      expect(error).toBeInstanceOf(RedisUnansweredError);
      expect(error).toBeInstanceOf(RedisLockError);
      expect((error as Error).name).toBe('RedisUnansweredError');
    }
  });

  it('are LockServiceClosedError for a wait shutdown ended (as the cause) and a call after it', async () => {
    const holder = own.opened(await createLockApp({ redis: own.url() }));
    const app = await createLockApp({ redis: own.url(), shutdownTimeout: '100ms' });
    const held = await holder.locks.acquire('classes:held');
    const queued = nextEvent(app.locks.events$, 'waiting');
    const waiting = app.locks.acquire('classes:held', { waitTimeout: '20s' }).then(() => undefined, (error: unknown) => error);
    await queued;
    await app.close();
    const ended = await waiting;
    expect(ended).toBeInstanceOf(LockNotAcquiredError);
    expect((ended as Error).cause).toBeInstanceOf(LockServiceClosedError);
    const refused = await app.locks.acquire('classes:after').then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(LockServiceClosedError);
    expect(refused).toBeInstanceOf(RedisLockError);
    await held.release();
  });
});
