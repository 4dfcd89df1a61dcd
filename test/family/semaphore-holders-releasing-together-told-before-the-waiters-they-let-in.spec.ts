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
 *
 * A second suspicion (forty-fourth session's notes), cleared: when the second release is never
 * answered (its reply lost), the waiter the first let in waits for it no longer than a third of
 * its grant lease from its last attempt (`Acquisition.releaseHere`), not until that release is
 * given up at the end of the holder's lease: it is handed its permit though that reply never came.
 */
import { describe, expect, it } from 'vitest';
import type { Duration, Lock, LockEvent, LockService } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { countAttempts, holdPolls, recordWakes } from '../support/mechanism.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

type Release = (...args: unknown[]) => Promise<unknown>;

/**
 * Holds back the replies of `locks`' semaphore releases, those after the first `answered`, until
 * `deliver()`, which gives them in the order sent.
 */
function holdSemaphoreReleaseReplies(locks: LockService, answered = 0): { held(): number; deliver(): void } {
  const semaphores = (locks as unknown as Record<symbol, { store: { semaphores: { release: Release } } }>)[LOCK_RUNNER as symbol]!.store.semaphores;
  const original = semaphores.release;
  const held: (() => void)[] = [];
  let sent = 0;
  semaphores.release = function (this: unknown, ...args: unknown[]) {
    const reply = original.apply(this, args);
    if (sent++ < answered) return reply;
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

/** Two holders of the semaphore `key` (limit 2), and what `locks` tells of it from then on: `acquired` and `released`, in order. */
async function bothPermitsHeld(locks: LockService, key: string, options: { limit: 2; ttl: Duration }): Promise<{ holders: Lock[]; told: string[] }> {
  const holders = await Promise.all([locks.acquire(key, options), locks.acquire(key, options)]);
  const told: string[] = [];
  locks.events$.subscribe((event: LockEvent) => {
    if (event.key === key && (event.type === 'acquired' || event.type === 'released')) told.push(event.type);
  });
  return { holders, told };
}

describe('two holders of one semaphore in one process releasing together, each letting in a waiter of it', () => {
  useRedis();
  const app = useLockApps();

  it('tells every released before the acquired of the waiter it let in', async () => {
    const { locks } = await app();
    const options = { limit: 2, ttl: '30s' } as const;
    const { holders, told } = await bothPermitsHeld(locks, 'sem-together', options);
    // Only the release messages can wake the waiters: their polls are held from their start.
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

  it('hands the waiter the first let in its permit though the second release is never answered', async () => {
    const { locks } = await app();
    // The second holder's lease outlives the test: its release is not given up before it ends.
    const options = { limit: 2, ttl: '60s' } as const;
    const { holders, told } = await bothPermitsHeld(locks, 'sem-one-answered', options);
    const wakes = recordWakes(locks);
    const attempts = countAttempts(locks);
    // Only the first release's message can let the waiter in: its polls are held from its start
    // (a poll answered after that release's grant would take the permit, under load).
    const polls = holdPolls(locks);
    const waiter = locks.acquire('sem-one-answered', { ...options, waitTimeout: '60s' });
    await expect.poll(() => wakes.steps.includes('queued'), { timeout: 10_000 }).toBe(true);
    // Queued by its first attempt, it hears release messages only once subscribed: a release
    // before that is found by its attempt after subscribing ('won', no grant message). Released
    // once an attempt sent while subscribed has been answered, as the first test does.
    await attempts.listening();
    const replies = holdSemaphoreReleaseReplies(locks, 1);
    // Sent together: the message of the first reaches the waiter once both are on their way.
    const first = holders[0]!.release();
    const second = holders[1]!.release();
    await first;
    await expect.poll(() => wakes.steps.includes('granted'), { timeout: 10_000 }).toBe(true);
    // The waiter now waits for the second release's reply, bounded by a timer of the same clock.
    polls.resume();
    const taken = await waiter;
    // Handed its permit with the second's reply still held. (Under load the grant's lease, counted
    // from the waiter's last attempt, may have run out by then: an attempt after the grant confirms it.)
    expect(replies.held()).toBe(1);
    expect(wakes.steps.slice(0, wakes.steps.indexOf('granted'))).not.toContain('won');
    expect(told).toEqual(['released', 'acquired']);
    attempts.stop();
    wakes.stop();
    replies.deliver();
    await second;
    await taken.release();
  }, 30_000);
});
