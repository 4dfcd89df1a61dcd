import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Lock, LockService } from '../../lib/index.js';
import type { MemoryData } from '../../lib/core/stores/memory/memory-data.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { holdPolls, recordWakes } from '../support/mechanism.js';
import { redisUrl } from '../support/redis.js';

type Notifier = { subscribed?(channel: string): boolean };
const subscribed = (locks: LockService, channel: string): boolean => (locks[LOCK_RUNNER] as unknown as { notifier?: Notifier }).notifier?.subscribed?.(channel) ?? true;
const tokenOf = (lock: Lock): string => (lock as unknown as { token: string }).token;

/**
 * Found by review: the last reader of a key whose own lease had lapsed (its process stalled, or
 * Redis evicted its reader key) released late. Its release answered "not held" before looking at
 * the key, which kept '~r' for a reader that was gone: nobody was handed the lock, and a
 * writer waiting for it slept until its next poll found the readers gone.
 */
describe('the late release of the last reader, whose own lease lapsed while another reader had left', () => {
  const backends = useBothStores();
  // The stores behind the apps: one on Redis, the one InMemoryLocks the memory apps share.
  const redis = new Redis(redisUrl(), { lazyConnect: true });
  const lapse = async (label: string, app: { locks: LockService }, key: string, reader: Lock): Promise<void> => {
    const name = `lock:{${key}}:reader:${tokenOf(reader)}`;
    if (label === 'redis') {
      expect(await redis.del(name)).toBe(1);
      return;
    }
    const store = (app.locks[LOCK_RUNNER] as unknown as { store: { data?: MemoryData; readers?: { data: MemoryData } } }).store;
    const data = store.data ?? store.readers?.data;
    expect(data?.locks.delete(name)).toBe(true);
  };
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
          await lapse(backend.label, readers, key, second);
          await second.release().catch(() => undefined);
          let won = false;
          void writer.then(() => (won = true), () => undefined);
          // Its polls held, the writer gets the lock only if the release frees it and says so.
          await expect.poll(() => won, { timeout: 8_000 }).toBe(true);
          const lock = await writer;
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
  it('closes its connection', () => void redis.disconnect());
});
