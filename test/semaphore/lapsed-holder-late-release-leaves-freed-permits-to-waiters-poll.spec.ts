import { describe, expect, it } from 'vitest';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { holdPolls, recordWakes } from '../support/mechanism.js';
import { lapseHolderKey, subscribed, woken } from '../support/lapsed-holder.js';

/**
 * Found by review: a semaphore holder whose permit had lapsed (its process stalled past its
 * lease, or Redis evicted its permit key) released late. Its release dropped its entry, freeing
 * its permits, yet handed them to none of the waiters queued for them: they slept until their
 * next poll, where a holder's release that frees permits hands them to the queue at once.
 */
describe('the late release of a semaphore holder whose permit lapsed while others waited', () => {
  const backends = useBothStores();
  for (const backend of backends) {
    it(`hands its permits to the waiter queued for them (${backend.label})`, async () => {
      const holders = await backend.open({ ttl: 30_000 });
      const waiters = await backend.open({ ttl: 30_000 });
      const key = uniqueKey('lapsed-permit');
      const holder = await holders.locks.acquire(key, { limit: 1 });
      // With its polls held, the waiter can get the permit only by a grant.
      const polls = holdPolls(waiters.locks);
      const wakes = recordWakes(waiters.locks);
      try {
        const waiter = waiters.locks.acquire(key, { limit: 1, waitTimeout: 20_000 });
        await expect.poll(() => wakes.steps.includes('queued'), { timeout: 5_000 }).toBe(true);
        await expect.poll(() => subscribed(waiters.locks, `lock:{${key}}:sr`), { timeout: 5_000 }).toBe(true);
        // The holder's permit lapses (as a stalled process's or an evicted key's would), then its
        // release comes.
        expect(await lapseHolderKey(backend.label, holders.locks, key, 'permit', holder)).toBe(true);
        await holder.release().catch(() => undefined);
        // Its polls held, it gets the lock only if the release hands it on or says it is free.
        const lock = await woken(waiter);
        expect(wakes.steps.at(-1)).toBe('granted');
        await lock.release();
      } finally {
        polls.resume();
        wakes.stop();
      }
    }, 30_000);
  }
});
