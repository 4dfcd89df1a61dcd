import { describe, expect, it } from 'vitest';
import type { LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { uniqueKey, useBothStores } from './support/both-stores.js';
import { holdPolls, recordWakes } from './support/mechanism.js';

type Notifier = { subscribed?(channel: string): boolean };
const subscribed = (locks: LockService, channel: string): boolean => (locks[LOCK_RUNNER] as unknown as { notifier?: Notifier }).notifier?.subscribed?.(channel) ?? true;

/**
 * Found by review: a reader whose call ended while its attempt was in flight (aborted, timed
 * out) leaves, and that leave gives back the read lock the attempt took. When it was the last
 * reader, the leave freed the key without the "lock freed" message (`*`) that a reader's release
 * sends, so a barging writer waiting for the key slept until its next poll.
 */
describe('a reader that gives up after its attempt let it in, and was the last reader', () => {
  for (const backend of useBothStores()) {
    it(`wakes a barging writer with the "lock freed" message (${backend.label})`, async () => {
      const readers = await backend.open({ ttl: 30_000 });
      const writers = await backend.open({ fairness: 'barging', ttl: 30_000 });
      const key = uniqueKey('reader-leave');
      const first = await readers.locks.acquire(key, { mode: 'read' });
      // With its polls held, the writer can get the lock only by a wake-up.
      const polls = holdPolls(writers.locks);
      const wakes = recordWakes(writers.locks);
      try {
        const writer = writers.locks.acquire(key, { waitTimeout: 20_000 });
        await expect.poll(() => wakes.steps.includes('busy'), { timeout: 5_000 }).toBe(true);
        await expect.poll(() => subscribed(writers.locks, `lock:{${key}}:released`), { timeout: 5_000 }).toBe(true);
        // The second reader's attempt is sent (and lets it in beside the first), then the first
        // reader's release (the second still reads: nothing freed), then the call is aborted:
        // its leave gives back the read lock, the last one.
        const controller = new AbortController();
        const second = readers.locks.tryAcquire(key, { mode: 'read', signal: controller.signal }).then(
          () => 'acquired',
          (error: Error) => error.name,
        );
        const released = first.release();
        controller.abort();
        expect(await second).not.toBe('acquired');
        await released;
        const lock = await writer;
        expect(wakes.steps.at(-2)).toBe('freed');
        expect(wakes.steps.at(-1)).toBe('won');
        await lock.release();
      } finally {
        polls.resume();
        wakes.stop();
      }
    }, 30_000);
  }
});
