import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { LockService } from '../lib/index.js';
import type { MemoryData } from '../lib/core/stores/memory/memory-data.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { uniqueKey, useBothStores } from './support/both-stores.js';
import { holdPolls, recordWakes } from './support/mechanism.js';
import { redisUrl } from './support/redis.js';

type Notifier = { subscribed?(channel: string): boolean };
const subscribed = (locks: LockService, channel: string): boolean => (locks[LOCK_RUNNER] as unknown as { notifier?: Notifier }).notifier?.subscribed?.(channel) ?? true;
const waiters = async (locks: LockService, key: string): Promise<number> => (await locks.inspect(key)).waiters;

/**
 * Found by review (thirty-ninth session). A read lock whose readers all crashed keeps its `~r`
 * until the longest lease it guarded runs out; the next script that counts its readers frees it.
 * When that script was a queued writer's leave (it gave up: aborted, timed out), the key was freed
 * without the "lock freed" message (`*`) that a reader's last release or leave sends, so a barging
 * writer waiting for the key slept until its next poll. Which path woke it is counted (its polls
 * are held), not how long it took.
 */
describe('a queued writer that gives up on a read lock whose readers all crashed', () => {
  for (const backend of useBothStores()) {
    it(`wakes a barging writer with the "lock freed" message (${backend.label})`, async () => {
      const readers = await backend.open({ ttl: 30_000 });
      const fifo = await backend.open({ ttl: 30_000 });
      const barging = await backend.open({ fairness: 'barging', ttl: 30_000 });
      const key = uniqueKey('writer-leave-crashed-readers');
      const reader = await readers.locks.acquire(key, { mode: 'read' });
      const fifoPolls = holdPolls(fifo.locks);
      const bargingPolls = holdPolls(barging.locks);
      const wakes = recordWakes(barging.locks);
      const controller = new AbortController();
      const writer = barging.locks.acquire(key, { waitTimeout: 20_000 });
      try {
        await expect.poll(() => wakes.steps.includes('busy'), { timeout: 5_000 }).toBe(true);
        await expect.poll(() => subscribed(barging.locks, `lock:{${key}}:released`), { timeout: 5_000 }).toBe(true);
        const queued = fifo.locks.acquire(key, { waitTimeout: 20_000, signal: controller.signal }).then(
          () => 'acquired',
          (error: Error) => error.name,
        );
        await expect.poll(() => waiters(barging.locks, key), { timeout: 5_000 }).toBe(1);
        await crashReader(barging.locks, key);
        // The queued writer gives up: its leave finds no reader left and frees the key.
        controller.abort();
        expect(await queued).not.toBe('acquired');
        // Failed before the fix: no wake-up came ('busy' last), the writer waited for a poll.
        await expect.poll(() => wakes.steps.at(-1), { timeout: 5_000 }).toBe('won');
        expect(wakes.steps.at(-2)).toBe('freed');
      } finally {
        fifoPolls.resume();
        bargingPolls.resume();
        wakes.stop();
        await (await writer).release();
        await reader.release().catch(() => undefined);
      }
    }, 30_000);
  }
});

/** The reader's key gone, as when its process died and its lease ran out; `~r` and the hash stay. */
async function crashReader(locks: LockService, key: string): Promise<void> {
  const lock = `lock:{${key}}`;
  const store = (locks[LOCK_RUNNER] as unknown as { store: { data?: MemoryData } }).store;
  if (store.data !== undefined) {
    const tokens = [...(store.data.readers.get(`${lock}:readers`)?.value.keys() ?? [])];
    expect(tokens).toHaveLength(1);
    store.data.locks.delete(`${lock}:reader:${tokens[0]}`);
    return;
  }
  const redis = new Redis(redisUrl());
  try {
    const tokens = await redis.hkeys(`${lock}:readers`);
    expect(tokens).toHaveLength(1);
    expect(await redis.del(`${lock}:reader:${tokens[0]}`)).toBe(1);
  } finally {
    await redis.quit();
  }
}
