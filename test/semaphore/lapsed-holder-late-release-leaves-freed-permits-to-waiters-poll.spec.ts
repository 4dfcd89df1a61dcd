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
 * Found by review: a semaphore holder whose permit had lapsed (its process stalled past its
 * lease, or Redis evicted its permit key) released late. Its release dropped its entry, freeing
 * its permits, yet handed them to none of the waiters queued for them: they slept until their
 * next poll, where a holder's release that frees permits hands them to the queue at once.
 */
describe('the late release of a semaphore holder whose permit lapsed while others waited', () => {
  const backends = useBothStores();
  const redis = new Redis(redisUrl(), { lazyConnect: true });
  const lapse = async (label: string, app: { locks: LockService }, key: string, holder: Lock): Promise<void> => {
    const name = `lock:{${key}}:permit:${tokenOf(holder)}`;
    if (label === 'redis') {
      expect(await redis.del(name)).toBe(1);
      return;
    }
    const store = (app.locks[LOCK_RUNNER] as unknown as { store: { data?: MemoryData } }).store;
    expect(store.data?.locks.delete(name)).toBe(true);
  };
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
        await lapse(backend.label, holders, key, holder);
        await holder.release().catch(() => undefined);
        let won = false;
        void waiter.then(() => (won = true), () => undefined);
        await expect.poll(() => won, { timeout: 8_000 }).toBe(true);
        const lock = await waiter;
        expect(wakes.steps.at(-1)).toBe('granted');
        await lock.release();
      } finally {
        polls.resume();
        wakes.stop();
      }
    }, 30_000);
  }
  it('closes its connection', () => void redis.disconnect());
});
