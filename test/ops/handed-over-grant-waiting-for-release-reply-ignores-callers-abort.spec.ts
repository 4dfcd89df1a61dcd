/**
 * Found by review (forty-fourth session) of 023d674: a waiter a release message hands the lock to
 * while the releasing holder of the same process has no reply yet waits for that reply (so that
 * `released` is told before its `acquired`, see `ReleasesOnTheirWay`). That wait listened to
 * shutdown alone: a caller whose `signal` aborted meanwhile was still handed the lock once the
 * reply came (or the wait ran out), its `acquire()` resolving with a lock it had cancelled, held
 * and renewed for nobody.
 *
 * Promise (docs/locks.md): `options.signal` cancels the wait and rejects with the signal's reason.
 *
 * Deterministic: the holder's release reply is held back (in the test's wrapper of the store) and
 * the waiter's timers are held, so only the reply or the signal can end its wait for the reply.
 */
import { describe, expect, it } from 'vitest';
import type { Lock, LockService } from '../../lib/index.js';
import { holdNextReleaseReply } from '../support/held-release-reply.js';
import { countAttempts, holdPolls, recordWakes } from '../support/mechanism.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('a waiter handed the lock while the releasing holder of its process waits for its reply', () => {
  useRedis();
  const app = useLockApps();

  it("rejects with its signal's reason when the signal aborts meanwhile, and gives the lock back", async () => {
    const { locks } = await app();
    const feed = locks.events$.subscribe();
    const first: Lock = await locks.acquire('handed-aborted', { ttl: '30s' });
    const wakes = recordWakes(locks as LockService);
    const attempts = countAttempts(locks);
    const polls = holdPolls(locks);
    const caller = new AbortController();
    const next = locks.acquire('handed-aborted', { ttl: '30s', waitTimeout: '30s', signal: caller.signal });
    const outcome = next.then(
      (lock) => ({ lock }),
      (error: unknown) => ({ error }),
    );
    await attempts.listening();
    const reply = holdNextReleaseReply(locks);
    const released = first.release();
    await expect.poll(() => wakes.steps.includes('granted'), { timeout: 5_000 }).toBe(true);
    expect(reply.held()).toBe(true);
    const reason = new Error('the caller went away');
    caller.abort(reason);
    // The abort has been heard by now, if it is heard at all.
    await new Promise((resolve) => setImmediate(resolve));
    reply.deliver();
    await released;
    polls.resume();
    const settled = await outcome;
    wakes.stop();
    attempts.stop();
    if ('lock' in settled) await settled.lock.release();
    // Failed: resolved with the lock, its caller's abort ignored.
    expect(settled).toEqual({ error: reason });
    // The grant it was handed in Redis went back, by the give-back sent on this connection before
    // the question (not by its 1 s lease running out): the lock is free for the next caller.
    expect(await locks.isLocked('handed-aborted')).toBe(false);
    feed.unsubscribe();
  }, 30_000);
});
