import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { LockLostError } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { holdPolls, recordWakes } from '../support/mechanism.js';
import { lapseHolderKey, subscribed, woken } from '../support/lapsed-holder.js';

/**
 * Review suspicion (forty-sixth session notes), confirmed: a semaphore holder whose permit key
 * was evicted or deleted is told it lost the lock at its next renewal, and that renewal drops
 * its entry, freeing its permits (d9880f3); but it handed them to none of the waiters queued for
 * them, which slept until their next poll, where a release, or any call whose count frees
 * permits, hands them to the queue at once. The waiter's polls are held: it gets the permit only
 * by a grant (see also renewal-finding-permit-gone-hands-its-permits-to-queue.spec.ts).
 */
describe('a semaphore holder told at its renewal that its permit key is gone, while another waits', () => {
  const backends = useBothStores();
  for (const backend of backends) {
    it(`hands its permits to the waiter queued for them (${backend.label})`, async () => {
      const holders = await backend.open({ ttl: 30_000, renewInterval: 200 });
      const waiters = await backend.open({ ttl: 30_000 });
      const key = uniqueKey('permit-gone-renewal');
      const first = await holders.locks.acquire(key, { limit: 2 });
      const second = await holders.locks.acquire(key, { limit: 2 });
      // With its polls held, the waiter can get the permit only by a grant.
      const polls = holdPolls(waiters.locks);
      const wakes = recordWakes(waiters.locks);
      try {
        const waiter = waiters.locks.acquire(key, { limit: 2, waitTimeout: 20_000 });
        await expect.poll(() => wakes.steps.includes('queued'), { timeout: 5_000 }).toBe(true);
        await expect.poll(() => subscribed(waiters.locks, `lock:{${key}}:sr`), { timeout: 5_000 }).toBe(true);
        // The second holder's permit goes (an eviction, an operator's DEL); its next renewal finds
        // it gone and tells it so.
        expect(await lapseHolderKey(backend.label, holders.locks, key, 'permit', second)).toBe(true);
        if (!second.signal.aborted) await once(second.signal, 'abort');
        expect((second.signal.reason as LockLostError).reason).toBe('refused');
        // Its polls held, the waiter gets the permit only if that renewal handed it on.
        const lock = await woken(waiter);
        expect(wakes.steps.at(-1)).toBe('granted');
        await Promise.all([lock.release(), first.release()]);
      } finally {
        polls.resume();
        wakes.stop();
      }
    }, 30_000);
  }
});
