import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, type Lock, type LockService } from '../../lib/index.js';
import { BARGING_RACES_BEFORE_QUEUE } from '../../lib/core/engine/fairness.js';
import { countAttempts, holdPolls, lostRaces, recordWakes, type AttemptCounter, type WakeLog } from '../support/mechanism.js';
import { sleep } from '../support/lock-app.js';
import { useBackend, type LockBackend } from './lock-behaviour.js';

/** The same backend, its applications opened with `fairness: 'barging'` as the module default. */
export function barging(backend: LockBackend): LockBackend {
  return { ...backend, fairness: 'barging', open: (options) => backend.open({ fairness: 'barging', ...options }) };
}

/**
 * The next lock after `held`, asked for before its release has been answered: on one connection
 * the acquire runs right behind the release, before any woken waiter's attempt can arrive, as
 * the greediest caller would.
 */
async function releaseAndTakeAgain(locks: LockService, held: Lock, key: string): Promise<Lock> {
  const [, next] = await Promise.all([held.release(), locks.acquire(key, { fairness: 'barging', waitTimeout: 10_000 })]);
  return next;
}

/**
 * Settles once `locks`' waiter is subscribed and its attempt sent after that was answered (a
 * release now reaches it); returns where `wakes` stood then.
 */
async function subscribed(attempts: AttemptCounter, wakes: WakeLog): Promise<number> {
  await attempts.listening();
  attempts.stop();
  return wakes.steps.length;
}

/**
 * What barging (`fairness: 'barging'`) promises on a backend whose waiters are woken by release
 * messages, beside the whole lock behaviour suite run with it (all but arrival order).
 */
export function describeBargingBehaviour(label: string, backend: LockBackend): void {
  describe(`barging (non-fair) locks: ${label}`, () => {
    const { open, key } = useBackend(backend, 'barging');

    /** A barging holder of a new key, and a barging waiter of another application subscribed behind it. */
    async function waiterBehindHolder(name: string) {
      const holder = await open({ fairness: 'barging' });
      const waiter = await open({ fairness: 'barging' });
      const k = key(name);
      // Both scripts loaded: a NOSCRIPT retry would send the release behind a later acquire.
      await (await holder.locks.acquire(k)).release();
      const held = await holder.locks.acquire(k);
      const wakes = recordWakes(waiter.locks);
      // The waiter never polls: its steps after a release are the release's doing alone.
      holdPolls(waiter.locks);
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(k, { waitTimeout: 10_000 });
      const from = await subscribed(attempts, wakes);
      return { holder, k, held, wakes, waiting, from };
    }

    if (!backend.queues) {
      it('refuses barging, naming the option, where waiters have no release messages', async () => {
        const { locks } = await open();
        await expect(locks.acquire(key('refused'), { fairness: 'barging' })).rejects.toMatchObject({ option: 'fairness', message: expect.stringContaining('quorum') });
        await expect(open({ fairness: 'barging' })).rejects.toBeInstanceOf(InvalidLockOptionsError);
      });
      return;
    }

    it('wakes a waiting caller by the release message, and its next attempt takes the lock', async () => {
      const { held, wakes, waiting, from } = await waiterBehindHolder('message');
      await held.release();
      const lock = await waiting;
      // The release said "free", and the one attempt after it won the race: no poll, no grant.
      expect(wakes.steps.slice(from)).toEqual(['freed', 'won']);
      expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
      wakes.stop();
      await lock.release();
    });

    it('lets a newcomer take a freed lock ahead of a waiter, which waits for the next release message', async () => {
      const { holder, k, held, wakes, waiting, from } = await waiterBehindHolder('barge');
      const barged = await releaseAndTakeAgain(holder.locks, held, k);
      expect(barged.fencingToken).toBe(held.fencingToken + 1);
      // The waiter was woken, raced and lost; then it waits for the next release, not a poll.
      while (wakes.lostRaces < 1) await sleep(5);
      await barged.release();
      const lock = await waiting;
      expect(wakes.steps.slice(from)).toEqual(['freed', 'busy', 'freed', 'won']);
      expect(lock.fencingToken).toBe(barged.fencingToken + 1);
      wakes.stop();
      await lock.release();
    });

    it('lets nobody starve under a greedy loop: a waiter that lost two races queues and is handed the lock', async () => {
      const greedy = await open({ fairness: 'barging' });
      const waiter = await open({ fairness: 'barging' });
      const k = key('greedy');
      // Both scripts loaded: a NOSCRIPT retry would send the release behind a later acquire.
      await (await greedy.locks.acquire(k)).release();
      let held = await greedy.locks.acquire(k);
      const wakes = recordWakes(waiter.locks);
      let served: Lock | undefined;
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(k, { waitTimeout: 20_000 }).then((lock) => (served = lock));
      await subscribed(attempts, wakes);
      let greedyNext: Promise<Lock> | undefined;
      // Each release is followed on its connection by the next acquire: the waiter loses every race.
      while (served === undefined) {
        const next = releaseAndTakeAgain(greedy.locks, held, k);
        const taken = await Promise.race([next, waiting.then(() => undefined)]);
        if (taken === undefined) {
          greedyNext = next;
          break;
        }
        held = taken;
      }
      const lock = await waiting;
      expect(lock.held).toBe(true);
      // It lost at most two races asking barging; its next attempt (a race too) asked to queue,
      // and once queued nobody barged past it: the lock came by a grant, or by that attempt.
      const steps = wakes.steps;
      const queuedAt = steps.indexOf('queued');
      const beforeQueue = queuedAt === -1 ? steps : steps.slice(0, queuedAt);
      if (queuedAt === -1) {
        expect(lostRaces(steps)).toBeLessThan(BARGING_RACES_BEFORE_QUEUE);
        expect(steps.at(-1)).toBe('won');
      } else {
        expect(lostRaces(beforeQueue)).toBe(BARGING_RACES_BEFORE_QUEUE);
        expect(steps.slice(queuedAt + 1)).not.toContain('busy');
        expect(['granted', 'won']).toContain(steps.at(-1));
      }
      wakes.stop();
      await lock.release();
      await (await greedyNext!).release();
    });

    it('never lets a barging newcomer overtake a FIFO waiter on the same key', async () => {
      const a = await open({ fairness: 'barging' });
      const fair = await open({ fairness: 'fifo' });
      const k = key('mixed');
      const held = await a.locks.acquire(k);
      // The FIFO waiter never polls: only the release can hand it the lock.
      holdPolls(fair.locks);
      const attempts = countAttempts(fair.locks);
      const waiting = fair.locks.acquire(k, { waitTimeout: 10_000 });
      await attempts.listening();
      const polled = attempts.count;
      const newcomer = releaseAndTakeAgain(a.locks, held, k);
      const lock = await waiting;
      // Handed over by the release (no attempt in between), ahead of the newcomer.
      expect(attempts.count).toBe(polled);
      expect(lock.fencingToken).toBe(held.fencingToken + 1);
      await lock.release();
      const next = await newcomer;
      expect(next.fencingToken).toBe(lock.fencingToken + 1);
      await next.release();
    });

    it('keeps fencing, owner checks and re-entry: a barging holder re-enters, and a stranger cannot release it', async () => {
      const { locks } = await open({ fairness: 'barging' });
      const other = await open({ fairness: 'barging' });
      const k = key('reenter');
      await locks.using(k, async (outer) => {
        const inner = await locks.acquire(k);
        expect(inner.fencingToken).toBe(outer.fencingToken);
        expect(await other.locks.tryAcquire(k)).toBeNull();
        await inner.release();
        expect(outer.held).toBe(true);
      });
      expect(await locks.isLocked(k)).toBe(false);
    });

    it('refuses bad fairness values and barging semaphores or read locks, naming the option', async () => {
      const { locks } = await open();
      const k = key('refused');
      await expect(locks.acquire(k, { fairness: 'random' as never })).rejects.toMatchObject({ option: 'fairness', value: 'random' });
      await expect(locks.acquire(k, { fairness: 'barging', limit: 3 })).rejects.toMatchObject({ option: 'fairness', message: expect.stringContaining('semaphore') });
      await expect(locks.acquire(k, { fairness: 'barging', mode: 'read' })).rejects.toMatchObject({ option: 'fairness', message: expect.stringContaining('read lock') });
      await expect(open({ fairness: 'yes' as never })).rejects.toBeInstanceOf(InvalidLockOptionsError);
      // A module-wide barging default leaves semaphores and read locks FIFO.
      const app = await open({ fairness: 'barging' });
      const permit = await app.locks.acquire(k, { limit: 2 });
      const reader = await app.locks.acquire(key('reader'), { mode: 'read' });
      await permit.release();
      await reader.release();
    });
  });
}
