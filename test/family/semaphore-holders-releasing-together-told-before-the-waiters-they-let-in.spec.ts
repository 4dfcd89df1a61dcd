/**
 * Review suspicion (forty-fourth session), cleared: `ReleasesOnTheirWay` keeps one release a
 * channel, the latest, and two holders of one semaphore in one process that release at about the
 * same time share its channel. A waiter the first release lets in, woken by that release's
 * message before its reply, waits for the second release's reply: both go on one connection and
 * are answered in the order sent, so the first holder's `released` is told by then, never after
 * the `acquired` of the waiter it let in (the promise of 023d674, docs/observability.md).
 *
 * Deterministic: the two releases' replies are held back (in the order they were sent, as their
 * connection answers them) until both waiters were handed their permit by the release messages.
 */
import { describe, expect, it } from 'vitest';
import type { LockEvent, LockService } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { countAttempts, holdPolls, recordWakes } from '../support/mechanism.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

type Release = (...args: unknown[]) => Promise<unknown>;

/** Holds back the replies of `locks`' semaphore releases until `deliver()`, which gives them in the order sent. */
function holdSemaphoreReleaseReplies(locks: LockService): { held(): number; deliver(): void } {
  const semaphores = (locks as unknown as Record<symbol, { store: { semaphores: { release: Release } } }>)[LOCK_RUNNER as symbol]!.store.semaphores;
  const original = semaphores.release;
  const held: (() => void)[] = [];
  semaphores.release = function (this: unknown, ...args: unknown[]) {
    const reply = original.apply(this, args);
    return new Promise((resolve) => held.push(() => resolve(reply)));
  };
  return {
    held: () => held.length,
    deliver() {
      semaphores.release = original;
      held.splice(0).forEach((deliver) => deliver());
    },
  };
}

describe('two holders of one semaphore in one process releasing together, each letting in a waiter of it', () => {
  useRedis();
  const app = useLockApps();

  it('tells every released before the acquired of the waiter it let in', async () => {
    const { locks } = await app();
    const options = { limit: 2, ttl: '30s' } as const;
    const holders = await Promise.all([locks.acquire('sem-together', options), locks.acquire('sem-together', options)]);
    const told: string[] = [];
    locks.events$.subscribe((event: LockEvent) => {
      if (event.key === 'sem-together' && (event.type === 'acquired' || event.type === 'released')) told.push(event.type);
    });
    // Only the release messages can wake the waiters: their polls are held.
    const wakes = recordWakes(locks);
    const attempts = countAttempts(locks);
    const polls = holdPolls(locks);
    const waiters = [0, 1].map(() => locks.acquire('sem-together', { ...options, waitTimeout: '30s' }));
    await expect.poll(() => wakes.steps.filter((step) => step === 'queued').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await attempts.listening();
    const replies = holdSemaphoreReleaseReplies(locks);
    const released = holders.map((holder) => holder.release());
    await expect.poll(() => wakes.steps.filter((step) => step === 'granted').length, { timeout: 10_000 }).toBe(2);
    expect(replies.held()).toBe(2);
    // All the waiters do with their grants without the replies (microtasks, no I/O) is done by now.
    await new Promise((resolve) => setImmediate(resolve));
    replies.deliver();
    await Promise.all(released);
    const taken = await Promise.all(waiters);
    wakes.stop();
    attempts.stop();
    polls.resume();
    await Promise.all(taken.map((lock) => lock.release()));
    // At every acquired, no more waiters let in than holders told released: never three holders shown.
    const shownHolders = told.slice(0, 4).reduce<number[]>((shown, type) => [...shown, (shown.at(-1) ?? 2) + (type === 'acquired' ? 1 : -1)], []);
    expect({ told: told.slice(0, 4), most: Math.max(...shownHolders) }).toEqual({ told: ['released', 'released', 'acquired', 'acquired'], most: 2 });
  }, 30_000);
});
