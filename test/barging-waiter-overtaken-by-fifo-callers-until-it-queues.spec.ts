/**
 * Found by review (thirty-eighth session): docs/locks.md ("Nobody starves") said a barging waiter
 * "is overtaken at most 3 times in a row once it is its process' longest waiter on the key,
 * whatever the others do". FIFO callers of the key are others too: while a barging waiter has not
 * queued yet (it says only that it waits, `P{K}:wanted`), every FIFO caller that queues meanwhile
 * is handed the lock before it, however many (a release hands the lock to the queue's head, and
 * publishes that the lock is free only once the queue is empty), until its polls (two busy ones,
 * about 500 ms) make it queue too. Bounded in time, not in count: the docs say so now, and this
 * spec pins the mechanism (the waiter's polls held, so only release messages can wake it).
 */
import { describe, expect, it } from 'vitest';
import type { Lock } from '../lib/index.js';
import { countAttempts, holdPolls, recordWakes } from './support/mechanism.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

describe('a barging waiter, and FIFO callers that queue after it started waiting', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('is overtaken by each of them (more than 3), then woken by the release that empties the queue', async () => {
    const holder = await app();
    const waiter = await app();
    const fifo = await app();
    const k = 'barging-behind-fifo';
    // Scripts loaded on every connection (a NOSCRIPT retry would reorder commands).
    for (const { locks } of [holder, waiter, fifo]) await (await locks.acquire(`${k}-warm`)).release();
    const held = await holder.locks.acquire(k);
    const wakes = recordWakes(waiter.locks);
    holdPolls(waiter.locks);
    const attempts = countAttempts(waiter.locks);
    const order: string[] = [];
    const waiting = waiter.locks.acquire(k, { fairness: 'barging', waitTimeout: 10_000 }).then((lock) => {
      order.push('barging waiter');
      return lock;
    });
    await attempts.listening();
    attempts.stop();
    const from = wakes.steps.length;
    const served = [1, 2, 3, 4].map((i) =>
      fifo.locks.acquire(k, { waitTimeout: 10_000 }).then((lock: Lock) => {
        order.push(`fifo ${i}`);
        return lock.release();
      }),
    );
    // All four queued (behind the holder) before it releases.
    await expect.poll(() => redis.llen(`lock:{${k}}:queue`)).toBe(4);
    await held.release();
    await Promise.all(served);
    const lock = await waiting;
    expect(order).toEqual(['fifo 1', 'fifo 2', 'fifo 3', 'fifo 4', 'barging waiter']);
    // Woken once, by the release of the last of them (the queue empty, the lock freed for it), and took it.
    expect(wakes.steps.slice(from)).toEqual(['freed', 'won']);
    await lock.release();
    wakes.stop();
  });
});
