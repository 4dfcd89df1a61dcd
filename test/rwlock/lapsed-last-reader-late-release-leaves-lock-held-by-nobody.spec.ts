import { describe, expect, it } from 'vitest';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { holdPolls, recordWakes } from '../support/mechanism.js';
import { lapseHolderKey, subscribed, woken } from '../support/lapsed-holder.js';

/**
 * Found by review: the last reader of a key whose own lease had lapsed (its process stalled, or
 * Redis evicted its reader key) released late. Its release answered "not held" before looking at
 * the key, which kept '~r' for a reader that was gone: nobody was handed the lock, and a
 * writer waiting for it slept until its next poll found the readers gone.
 */
describe('the late release of the last reader, whose own lease lapsed while another reader had left', () => {
  const backends = useBothStores();
  const cases = [
    // A barging writer is told the key is free ('*'); a queued one is handed it.
    { fairness: 'barging', wake: 'freed' },
    { fairness: 'fifo', wake: 'granted' },
  ] as const;
  for (const backend of backends) {
    for (const { fairness, wake } of cases) {
      it(`frees the key and wakes the waiting ${fairness} writer (${backend.label})`, async () => {
        const readers = await backend.open({ ttl: 30_000 });
        const writers = await backend.open({ fairness, ttl: 30_000 });
        const key = uniqueKey('lapsed-reader');
        const first = await readers.locks.acquire(key, { mode: 'read' });
        const second = await readers.locks.acquire(key, { mode: 'read' });
        // With its polls held, the writer can get the lock only by a wake-up.
        const polls = holdPolls(writers.locks);
        const wakes = recordWakes(writers.locks);
        try {
          const writer = writers.locks.acquire(key, { waitTimeout: 20_000 });
          await expect.poll(() => wakes.steps.some((step) => step === 'busy' || step === 'queued'), { timeout: 5_000 }).toBe(true);
          await expect.poll(() => subscribed(writers.locks, `lock:{${key}}:released`), { timeout: 5_000 }).toBe(true);
          // The first reader leaves while the second still reads: nothing is freed.
          await first.release();
          // The second reader's lease lapses (as a stalled process's or an evicted key's would),
          // then its release comes: the key has no reader left.
          expect(await lapseHolderKey(backend.label, readers.locks, key, 'reader', second)).toBe(true);
          await second.release().catch(() => undefined);
          // Its polls held, it gets the lock only if the release hands it on or says it is free.
          const lock = await woken(writer);
          expect(wakes.steps.at(fairness === 'fifo' ? -1 : -2)).toBe(wake);
          if (fairness === 'barging') expect(wakes.steps.at(-1)).toBe('won');
          await lock.release();
        } finally {
          polls.resume();
          wakes.stop();
        }
      }, 30_000);
    }
  }
});
