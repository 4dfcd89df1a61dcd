/**
 * Found while checking a review suspicion (forty-fourth session). While anyone listens to lock
 * events, a waiter handed a lock by a release message waits for the reply of a release of the
 * same key this process sent and Redis has not answered (`ReleasesOnTheirWay`), so that the
 * holder's `released` is told before its `acquired`. A release whose reply never comes (a dead
 * link that resets nothing) is given up at the end of its lease, its `released` told then
 * (`unconfirmed: true`), but its entry stayed, one per such key, for as long as the application
 * ran: every later grant of that key, whoever released it, waited on it for nothing, up to a third
 * of the grant's lease each time. The entry now goes once the holder told its release, either way.
 *
 * Mechanism, not time: the waiter's timers are held (`holdPolls`), so a waiter that waits on the
 * stale release waits until the test times out, and one that does not holds the lock at once.
 */
import { describe, expect, it } from 'vitest';
import type { LockEvent } from '../../lib/index.js';
import { holdNextReleaseReply } from '../support/held-release-reply.js';
import { useLockApps } from '../support/lock-app.js';
import { countAttempts, holdPolls, settledRecord } from '../support/mechanism.js';
import { useRedis } from '../support/redis.js';

describe('a release whose reply never came', () => {
  useRedis();
  const app = useLockApps();

  it('holds up no later grant of its key once its holder was told released', { timeout: 20_000 }, async () => {
    const key = 'reply-never-came';
    const here = await app();
    const other = await app();
    const events: LockEvent[] = [];
    here.locks.events$.subscribe((event) => events.push(event));
    const first = await here.locks.acquire(key, { ttl: '1s' });
    // The release runs in Redis (the key is freed); its reply never comes back.
    holdNextReleaseReply(here.locks);
    const released = settledRecord(first.release());
    await expect.poll(() => events.some((event) => event.type === 'released' && event.unconfirmed === true), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => released.settled !== undefined).toBe(true);
    // Another instance takes the key, and a waiter of this one queues behind it.
    const held = await other.locks.acquire(key);
    const polls = holdPolls(here.locks);
    const attempts = countAttempts(here.locks);
    try {
      const next = settledRecord(here.locks.acquire(key, { waitTimeout: '30s' }));
      await attempts.listening();
      await held.release();
      // Before: never (until the test's end), waiting on the release given up above.
      await expect.poll(() => next.settled !== undefined, { timeout: 10_000 }).toBe(true);
      expect(next.settled!.error).toBeUndefined();
      await next.settled!.value!.release();
    } finally {
      attempts.stop();
      polls.resume();
    }
  });
});
