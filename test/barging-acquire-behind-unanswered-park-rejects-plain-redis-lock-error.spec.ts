/**
 * Found by review (thirty-ninth session): `fairness: 'barging'`. A caller of a key whose lock this
 * process is releasing with a park request waits for that release's answer first; when Redis did
 * not answer it within the call's bound (frozen here by SIGSTOP; a network cut that resets
 * nothing looks the same), `acquire()` rejected with a plain `RedisLockError` ("Redis did not
 * answer the acquire of lock "k" within 1000 ms."), where docs/guarantees.md promises that a call
 * that waits rejects with a `LockNotAcquiredError` saying that Redis did not answer, its `cause`
 * saying how: a caller handling `LockNotAcquiredError` as "busy, try later" got an error it did
 * not expect, and a `@Locked` route a 500 and an error log where it gets 503. `tryAcquire()`
 * rejected with the same message, naming neither the call nor the list a key was part of. They
 * now reject as when Redis leaves their own attempt unanswered: a `LockNotAcquiredError`, and
 * `tryAcquire("k"): Redis did not answer within 1000 ms.`
 */
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError, RedisUnansweredError, type LockService } from '../lib/index.js';
import { isUnansweredRead } from '../lib/core/engine/unanswered.js';
import { recordReleases } from './support/mechanism.js';
import { createLockApp } from './support/lock-app.js';
import { useFrozenRedis } from './support/frozen-redis.js';

describe('a barging caller behind its process\' parking release that Redis does not answer', () => {
  // Its own server, since it is frozen.
  const own = useFrozenRedis();

  it('acquire() rejects with LockNotAcquiredError, tryAcquire() naming the call', async () => {
    const app = own.opened(await createLockApp({ redis: own.url(), fairness: 'barging', shutdownTimeout: '100ms' }));
    const locks: LockService = app.locks;
    // A greedy caller (it asked again in the turn its release came back): its next release is sent with a park request.
    await (await locks.acquire('parked')).release();
    const held = await locks.acquire('parked');
    const releases = recordReleases(locks);
    own.server().pause();
    const releasing = held.release();
    releasing.catch(() => undefined);
    expect(releases.releases.at(-1)!.park).toBeDefined();
    releases.stop();
    const outcome = (call: Promise<unknown>) =>
      call.then(
        () => 'a lock',
        (error: unknown) => ({ type: (error as Error).constructor.name, lockError: error instanceof RedisLockError, message: (error as Error).message, unanswered: isUnansweredRead((error as Error).cause ?? error) }),
      );
    expect(await Promise.all([outcome(locks.acquire('parked', { waitTimeout: 100 })), outcome(locks.tryAcquire('parked'))])).toEqual([
      { type: LockNotAcquiredError.name, lockError: true, message: expect.stringMatching(/^Lock "parked" was not acquired within \d+ ms: Redis did not answer/), unanswered: true },
      { type: RedisUnansweredError.name, lockError: true, message: expect.stringMatching(/^tryAcquire\("parked"\): Redis did not answer within \d+ ms\.$/), unanswered: true },
    ]);
  });
});
