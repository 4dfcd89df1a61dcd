import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, type Lock, type LockService } from '../../lib/index.js';
import { BARGING_RACES_BEFORE_QUEUE } from '../../lib/core/engine/fairness.js';
import { PARKS_PER_STREAK } from '../../lib/core/engine/lock-parking.js';
import type { LockEvent } from '../../lib/interfaces/lock-event.interface.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { countAttempts, holdPolls, lostRaces, recordReleases, recordWakes, type AttemptCounter, type WakeLog } from '../support/mechanism.js';
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
 * Runs a greedy loop (`next` releases the lock it is given and takes the key again) from `held`
 * until `waiting` is served; returns the loop's acquisition still under way then.
 */
async function loopUntilServed(held: Lock, waiting: Promise<Lock>, next: (held: Lock) => Promise<Lock>): Promise<{ taking: Promise<Lock> }> {
  const served = waiting.then(() => undefined);
  for (;;) {
    const taking = next(held);
    const taken = await Promise.race([taking, served]);
    // Wrapped: an async function's returned promise would be awaited, and it waits for `waiting`'s lock.
    if (taken === undefined) return { taking };
    held = taken;
  }
}

/** The next turn of the event loop: a caller that asks after it is no greedy loop (see `LockParking`). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The store behind an application, to call a release script directly. */
type ParkingStore = { release(keys: unknown, token: string, lease: number, park?: { token: string; ttl: number }): Promise<{ released: boolean; parked?: { fencingToken: number; contended: boolean }; grant?: { token: string; fencingToken: number } }> };
const storeOf = (locks: LockService): ParkingStore => (locks[LOCK_RUNNER] as unknown as { store: ParkingStore }).store;
const namesOf = (lock: Lock): unknown => (lock as unknown as { names: unknown }).names;

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
      // Not in the release's turn: a plain holder, whose releases free the lock (no parking).
      await nextTurn();
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

    it('wakes a writer waiting behind readers by the message of the last reader’s release', async () => {
      const readers = await open({ fairness: 'fifo' });
      const writer = await open({ fairness: 'barging' });
      const k = key('behind-readers');
      const read = await readers.locks.acquire(k, { mode: 'read' });
      const wakes = recordWakes(writer.locks);
      holdPolls(writer.locks);
      const attempts = countAttempts(writer.locks);
      const waiting = writer.locks.acquire(k, { waitTimeout: 10_000 });
      const from = await subscribed(attempts, wakes);
      await read.release();
      const lock = await waiting;
      // The last reader's release said "free" (no queue to hand it to): no poll, no grant.
      expect(wakes.steps.slice(from)).toEqual(['freed', 'won']);
      wakes.stop();
      await lock.release();
    });

    it('lets a newcomer take a freed lock ahead of a waiter, which waits for the next release message', async () => {
      // The newcomer's acquire reaches Redis right behind the release on the holder's connection,
      // and wins the race; on a loaded machine the woken waiter's attempt reached Redis first in
      // two fresh-clone runs (GLIDE, one server and a Cluster: its core between the two). Then the
      // lock is handed on and the race run again, up to three times: barging lets a newcomer in
      // ahead, it does not promise it, and a run where it never does still fails.
      for (let attempt = 1; ; attempt++) {
        const { holder, k, held, wakes, waiting, from } = await waiterBehindHolder(`barge-${attempt}`);
        const releasing = held.release();
        const taking = holder.locks.acquire(k, { fairness: 'barging', waitTimeout: 10_000 });
        const first = await Promise.race([taking.then(() => 'newcomer' as const), waiting.then(() => 'waiter' as const)]);
        if (first === 'waiter') {
          await releasing;
          await (await waiting).release();
          await (await taking).release();
          wakes.stop();
          if (attempt < 3) continue;
        }
        expect(first, 'the woken waiter beat the newcomer in three races out of three').toBe('newcomer');
        await releasing;
        const barged = await taking;
        await bargedAhead(barged, held, wakes, waiting, from);
        return;
      }
    });

    /** The rest of the case above, once the newcomer has taken the lock ahead of the waiter. */
    async function bargedAhead(barged: Lock, held: Lock, wakes: WakeLog, waiting: Promise<Lock>, from: number): Promise<void> {
      expect(barged.fencingToken).toBe(held.fencingToken + 1);
      // The waiter was woken, raced and lost; then it waits for the next release, not a poll.
      while (wakes.lostRaces < 1) await sleep(5);
      await barged.release();
      const lock = await waiting;
      expect(wakes.steps.slice(from)).toEqual(['freed', 'busy', 'freed', 'won']);
      expect(lock.fencingToken).toBe(barged.fencingToken + 1);
      wakes.stop();
      await lock.release();
    }

    it('lets nobody starve under a greedy loop: a waiter that lost two races queues and is handed the lock', async () => {
      const greedy = await open({ fairness: 'barging' });
      const waiter = await open({ fairness: 'barging' });
      const k = key('greedy');
      // Both scripts loaded: a NOSCRIPT retry would send the release behind a later acquire.
      await (await greedy.locks.acquire(k)).release();
      const held = await greedy.locks.acquire(k);
      const wakes = recordWakes(waiter.locks);
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(k, { waitTimeout: 20_000 });
      await subscribed(attempts, wakes);
      // Each release is followed on its connection by the next acquire: the waiter loses every race.
      const { taking: greedyNext } = await loopUntilServed(held, waiting, (last) => releaseAndTakeAgain(greedy.locks, last, k));
      const lock = await waiting;
      expect(lock.held).toBe(true);
      // It lost at most two races asking barging; its next attempt (a race too) asked to queue,
      // and once queued nobody barged past it: the lock came by a grant, or by that attempt.
      const steps = wakes.steps;
      const queuedAt = steps.indexOf('queued');
      const beforeQueue = queuedAt === -1 ? steps : steps.slice(0, queuedAt);
      if (queuedAt === -1) {
        // Never queued: it won a race, at most the one its attempt asking to queue ran.
        expect(lostRaces(steps)).toBeLessThanOrEqual(BARGING_RACES_BEFORE_QUEUE);
        expect(steps.at(-1)).toBe('won');
      } else {
        expect(lostRaces(beforeQueue)).toBe(BARGING_RACES_BEFORE_QUEUE);
        expect(steps.slice(queuedAt + 1)).not.toContain('busy');
        expect(['granted', 'won']).toContain(steps.at(-1));
      }
      wakes.stop();
      await lock.release();
      await (await greedyNext).release();
    });

    describe('parking a hot lock in a greedy process', () => {
      it('parks the lock of a caller that takes it again in the same turn: one release script call per acquisition, no acquire attempt, fencing tokens one apart', async () => {
        const { locks } = await open({ fairness: 'barging' });
        const other = await open({ fairness: 'barging' });
        const k = key('park-loop');
        const events: LockEvent[] = [];
        const subscription = locks.events$.subscribe((event) => events.push(event));
        let held = await locks.acquire(k);
        const attempts = countAttempts(locks);
        const releases = recordReleases(locks);
        const tokens = [held.fencingToken];
        for (let round = 0; round < 10; round++) {
          await held.release();
          held = await locks.acquire(k);
          tokens.push(held.fencingToken);
          // Held in Redis for this caller: nobody else gets it.
          expect(held.held).toBe(true);
          expect(await other.locks.tryAcquire(k)).toBeNull();
        }
        // The first release was a plain one (the loop was not known yet); every later one parked,
        // and the acquisitions after them sent nothing.
        expect(releases.releases.map((release) => release.parked)).toEqual([false, ...Array(9).fill(true)]);
        expect(attempts.count).toBe(1);
        expect(tokens.slice(1).map((token, i) => token - tokens[i]!)).toEqual(Array(10).fill(1));
        // Every acquisition was told, the zero-round-trip ones too.
        expect(events.filter((event) => event.type === 'acquired').length).toBe(11);
        await held.release();
        const last = releases.releases.at(-1)!;
        expect(last.parked).toBe(true);
        // Nobody of this process asked again: the parked lock is freed by an owner-checked release under the park token.
        while (await other.locks.isLocked(k)) await sleep(1);
        expect(releases.releases.length).toBe(12);
        expect(releases.releases.at(-1)).toMatchObject({ token: last.park, park: undefined });
        const next = await other.locks.acquire(k);
        expect(next.fencingToken).toBe(held.fencingToken + 2);
        await next.release();
        subscription.unsubscribe();
        attempts.stop();
        releases.stop();
      });

      it('never parks for a polite releaser, who asks again in a later turn', async () => {
        const { locks } = await open({ fairness: 'barging' });
        const k = key('park-polite');
        const releases = recordReleases(locks);
        const attempts = countAttempts(locks);
        for (let round = 0; round < 5; round++) {
          await (await locks.acquire(k)).release();
          await nextTurn();
        }
        expect(releases.releases.every((release) => release.park === undefined)).toBe(true);
        expect(attempts.count).toBe(5);
        releases.stop();
        attempts.stop();
      });

      it('never hands a parked lock to a caller whose signal is aborted, and frees it for the others', async () => {
        const { locks } = await open({ fairness: 'barging' });
        const other = await open({ fairness: 'barging' });
        const k = key('park-abort');
        const releases = recordReleases(locks);
        let held = await locks.acquire(k);
        await held.release();
        held = await locks.acquire(k);
        await held.release();
        expect(releases.releases.at(-1)!.parked).toBe(true);
        const aborted = new AbortController();
        aborted.abort(new Error('caller gave up'));
        await expect(locks.acquire(k, { signal: aborted.signal })).rejects.toThrow('caller gave up');
        const next = await other.locks.acquire(k, { waitTimeout: 10_000 });
        expect(next.fencingToken).toBe(held.fencingToken + 2);
        await next.release();
        releases.stop();
      });

      it('never parks a FIFO lock, even in a greedy loop', async () => {
        const { locks } = await open({ fairness: 'fifo' });
        const k = key('park-fifo');
        const releases = recordReleases(locks);
        let held = await locks.acquire(k);
        for (let round = 0; round < 5; round++) {
          await held.release();
          held = await locks.acquire(k);
        }
        await held.release();
        expect(releases.releases.every((release) => release.park === undefined)).toBe(true);
        releases.stop();
      });

      it('gives the lock back at shutdown when it is parked: nothing is left in the store', async () => {
        // Closed by the test, not after it.
        const greedy = await backend.open({ fairness: 'barging' });
        const other = await open({ fairness: 'barging' });
        const k = key('park-close');
        const releases = recordReleases(greedy.locks);
        let held = await greedy.locks.acquire(k);
        await held.release();
        held = await greedy.locks.acquire(k);
        await held.release();
        expect(releases.releases.at(-1)!.parked).toBe(true);
        // Closed in the turn the parked release came back, before the lock could be freed on the next one.
        await greedy.close();
        expect(await other.locks.isLocked(k)).toBe(false);
      });

      it('parks only with nobody queued, under the next fencing token, and the parked lock runs out by its lease (its process died)', async () => {
        const { locks } = await open({ fairness: 'barging' });
        const fair = await open({ fairness: 'fifo' });
        const k = key('park-store');
        const store = storeOf(locks);
        // A process that dies while its lock is parked never frees it: the lease does.
        const held = await locks.acquire(k, { ttl: 300, autoRenew: false });
        const parked = await store.release(namesOf(held), (held as unknown as { token: string }).token, 1_000, { token: 'parked-by-a-dead-process', ttl: 300 });
        expect(parked).toMatchObject({ released: true, parked: { fencingToken: held.fencingToken + 1, contended: false } });
        expect(await fair.locks.tryAcquire(k)).toBeNull();
        const after = await fair.locks.acquire(k, { waitTimeout: 10_000 });
        expect(after.fencingToken).toBe(held.fencingToken + 2);
        // A stale park token frees nothing: the owner check refuses it.
        expect(await store.release(namesOf(after), 'parked-by-a-dead-process', 1_000)).toEqual({ released: false });
        expect(after.held).toBe(true);
        // A queued (FIFO) waiter is never parked over: the release hands the lock to it.
        const waiting = locks.acquire(k, { fairness: 'fifo', waitTimeout: 10_000 });
        while ((await fair.locks.inspect(k)).waiters === 0) await sleep(1);
        const handed = await store.release(namesOf(after), (after as unknown as { token: string }).token, 1_000, { token: 'never', ttl: 300 });
        expect(handed.parked).toBeUndefined();
        expect(handed.released).toBe(true);
        expect(handed.grant?.fencingToken).toBe(after.fencingToken + 1);
        const lock = await waiting;
        // The grant's token, or the next one when the release came before the waiter's
        // subscription and its next attempt confirmed the grant.
        expect(lock.fencingToken).toBeGreaterThanOrEqual(after.fencingToken + 1);
        await lock.release();
      });

      it('ends a streak while a barging waiter waits: at most PARKS_PER_STREAK parks in a row, then a release that wakes it', async () => {
        const greedy = await open({ fairness: 'barging' });
        const waiter = await open({ fairness: 'barging' });
        const k = key('park-streak');
        let held = await greedy.locks.acquire(k);
        await held.release();
        held = await greedy.locks.acquire(k);
        const wakes = recordWakes(waiter.locks);
        const attempts = countAttempts(waiter.locks);
        // Its polls held: on a loaded machine one came between a release and the greedy caller's
        // next acquire, and took the lock with no release message ('busy', 'busy', 'won').
        holdPolls(waiter.locks);
        const waiting = waiter.locks.acquire(k, { waitTimeout: 20_000 });
        await subscribed(attempts, wakes);
        const releases = recordReleases(greedy.locks);
        // The usual loop: release, and ask again once the release is answered.
        const { taking: greedyNext } = await loopUntilServed(held, waiting, async (last) => {
          await last.release();
          return greedy.locks.acquire(k, { waitTimeout: 20_000 });
        });
        const lock = await waiting;
        expect(lock.held).toBe(true);
        // The release that woke the waiter can be answered here after the waiter was served (a
        // loaded CI run: no release seen not to park, its answer still on its way).
        await releases.answered();
        // The parks that found the waiter waiting came in runs of at most PARKS_PER_STREAK, each
        // ended by a release that did not park (and woke it).
        let run = 0;
        let longest = 0;
        for (const release of releases.releases) {
          run = release.parked === true && release.contended === true ? run + 1 : 0;
          longest = Math.max(longest, run);
        }
        expect(longest).toBeLessThanOrEqual(PARKS_PER_STREAK);
        expect(releases.releases.some((release) => release.parked === false)).toBe(true);
        expect(wakes.steps).toContain('freed');
        releases.stop();
        wakes.stop();
        await lock.release();
        await (await greedyNext).release();
      });
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
