import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockLostError, SemaphoreLimitError, UnsupportedLockKindError, type Lock } from '../../lib/index.js';
import { nextEvent, sleep, type LockApp } from '../support/lock-app.js';
import { leaseDeadline } from '../support/mechanism.js';
import { useBackend, type LockBackend } from './lock-behaviour.js';

/** The counting semaphore (`limit`), through the public API, on every backend. */
export function describeSemaphoreBehaviour(label: string, backend: LockBackend): void {
  describe(`semaphore behaviour: ${label}`, () => {
    const { open, key } = useBackend(backend, 'semaphore');

    if (!backend.queues) {
      it('refuses a semaphore at call time with an error saying it is not supported', async () => {
        const { locks } = await open();
        await expect(locks.acquire(key('quorum'), { limit: 3 })).rejects.toThrow(UnsupportedLockKindError);
        await expect(locks.using(key('quorum'), () => 1, { limit: 3 })).rejects.toThrow(/not supported in quorum mode/);
        await expect(locks.tryAcquire(key('quorum'), { limit: 3 })).rejects.toThrow(UnsupportedLockKindError);
      });
      return;
    }

    /** Starts an acquire on its own instance and resolves once it waits in the queue. */
    const queued = async (k: string, options: { limit: number; permits?: number }): Promise<{ lock: Promise<Lock>; app: LockApp }> => {
      const app = await open();
      const waiting = nextEvent(app.locks.events$, 'waiting', 10_000);
      const lock = app.locks.acquire(k, { ...options, waitTimeout: 20_000 });
      lock.catch(() => undefined);
      await waiting;
      return { lock, app };
    };

    it('hands out a higher fencing token than before its counter was lost, alone and beside another holder', async () => {
      const { locks } = await open();
      const k = key('counter-lost');
      const first = await locks.acquire(k, { limit: 3 });
      await sleep(10);
      await backend.forgetFence(k);
      // Beside a holder: the path that counts the holders.
      const second = await locks.acquire(k, { limit: 3 });
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
      await Promise.all([first.release(), second.release()]);
      await sleep(10);
      await backend.forgetFence(k);
      // Alone: the path for a semaphore nobody holds.
      const third = await locks.acquire(k, { limit: 3 });
      expect(third.fencingToken).toBeGreaterThan(second.fencingToken);
      await third.release();
    });

    it('lets at most `limit` holders in, and the next one in when a permit is given back', async () => {
      const a = await open();
      const b = await open();
      const k = key('limit');
      const held = await Promise.all([a.locks.acquire(k, { limit: 3 }), a.locks.acquire(k, { limit: 3 }), b.locks.acquire(k, { limit: 3 })]);
      expect(held.every((lock) => lock.held)).toBe(true);
      expect(new Set(held.map((lock) => lock.fencingToken)).size).toBe(3);
      expect(await b.locks.tryAcquire(k, { limit: 3 })).toBeNull();
      const { lock: next } = await queued(k, { limit: 3 });
      await held[1]!.release();
      const fourth = await next;
      expect(fourth.fencingToken).toBeGreaterThan(Math.max(...held.map((lock) => lock.fencingToken)));
      expect(await b.locks.tryAcquire(k, { limit: 3 })).toBeNull();
      await Promise.all([held[0]!.release(), held[2]!.release(), fourth.release()]);
      const free = await b.locks.tryAcquire(k, { limit: 3, permits: 3 });
      expect(free).not.toBeNull();
      await free!.release();
    });

    it('serves waiters in arrival order, granting as many as fit on one release, and never lets a small request overtake', { timeout: 60_000 }, async () => {
      // A permit a release hands to a waiter starts on a 1 s lease, renewed a third of the way in:
      // a loaded machine that held this process up past it took the permit back, rightly (its
      // holder told lost), and the counts below no longer held (the last waiter then took its two
      // permits at once, and its wait for 'waiting' ran the case out of time). Such a run is void:
      // it runs again on a key of its own, up to three times; a run in which no lease ran out
      // must pass.
      for (let run = 1; ; run++) {
        const lost: string[] = [];
        const watch = (app: LockApp): void => {
          app.locks.events$.subscribe((event) => {
            if (event.type === 'lost' && event.reason !== 'shutdown') lost.push(event.reason);
          });
        };
        try {
          await servesInArrivalOrder(key(`fifo-${run}`), watch);
          return;
        } catch (error) {
          if (lost.length === 0 || run === 3) throw error;
        }
      }
    });

    const servesInArrivalOrder = async (k: string, watch: (app: LockApp) => void): Promise<void> => {
      const a = await open();
      watch(a);
      const all = await a.locks.acquire(k, { limit: 3, permits: 3 });
      const first = await queued(k, { limit: 3, permits: 2 });
      watch(first.app);
      const second = await queued(k, { limit: 3, permits: 1 });
      watch(second.app);
      const third = await queued(k, { limit: 3, permits: 1 });
      watch(third.app);
      let thirdIn = false;
      void third.lock.then(() => (thirdIn = true), () => undefined);
      await all.release();
      const [one, two] = await Promise.all([first.lock, second.lock]);
      await sleep(200);
      // Both fit in the 3 permits given back; the third must wait for more.
      expect(thirdIn).toBe(false);
      await one.release();
      const three = await third.lock;
      // Fencing tokens are handed out in grant order: the queue's order.
      expect(one.fencingToken).toBeLessThan(two.fencingToken);
      expect(two.fencingToken).toBeLessThan(three.fencingToken);
      // One permit is free, but a waiter wanting 2 is ahead: a request for 1 must queue behind it.
      const big = await queued(k, { limit: 3, permits: 2 });
      watch(big.app);
      expect(await a.locks.tryAcquire(k, { limit: 3 })).toBeNull();
      await two.release();
      const bigLock = await big.lock;
      expect(bigLock.held).toBe(true);
      await Promise.all([three.release(), bigLock.release()]);
    };

    it('refuses a caller that gives another limit while the semaphore is in use, at once', async () => {
      const { locks } = await open();
      const k = key('mismatch');
      const held = await locks.acquire(k, { limit: 3 });
      const error = await locks.acquire(k, { limit: 5, waitTimeout: 60_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SemaphoreLimitError);
      expect((error as SemaphoreLimitError).limitInUse).toBe(3);
      expect((error as Error).message).toContain('limit 3');
      expect((error as Error).message).toContain('limit 5');
      await expect(locks.tryAcquire(k, { limit: 1 })).rejects.toThrow(SemaphoreLimitError);
      // Nor does a refused caller's clean-up count permits with its own limit.
      const full = await Promise.all([locks.acquire(k, { limit: 3 }), locks.acquire(k, { limit: 3 })]);
      const { lock: waiter } = await queued(k, { limit: 3 });
      let admitted = false;
      void waiter.then(() => (admitted = true), () => undefined);
      await expect(locks.acquire(k, { limit: 5, waitTimeout: 1_000 })).rejects.toThrow(SemaphoreLimitError);
      await sleep(300);
      expect(admitted).toBe(false);
      await full[0]!.release();
      await (await waiter).release();
      await full[1]!.release();
      await held.release();
      // Idle again: the limit is forgotten with its last holder.
      const other = await locks.acquire(k, { limit: 5, waitTimeout: 0 });
      await other.release();
    });

    it('frees the permit of a holder that stopped renewing once its lease runs out, on the store clock', async () => {
      const a = await open();
      const b = await open();
      const k = key('crashed');
      const stale = await a.locks.acquire(k, { limit: 1, ttl: 400, autoRenew: false });
      const next = await b.locks.acquire(k, { limit: 1, waitTimeout: 10_000 });
      // Not before the stale lease ran out: the earliest the store can have let it go.
      expect(performance.now()).toBeGreaterThanOrEqual(leaseDeadline(stale));
      expect(next.fencingToken).toBeGreaterThan(stale.fencingToken);
      // Told by reading `held`: the signal aborts on the deadline sweeper's timer, and a loaded
      // machine ran the acquire's reply first (docs/locks.md, `signal`).
      expect(stale.held).toBe(false);
      expect(stale.signal.aborted).toBe(true);
      expect(stale.signal.reason).toBeInstanceOf(LockLostError);
      await next.release();
    });

    it('renews each permit with the watchdog, so a holder keeps it past its ttl', async () => {
      const { locks } = await open();
      const k = key('renew');
      // A 1.2 s lease renewed every 400 ms survives a loaded machine's stalls; 300 ms did not.
      const held = await locks.acquire(k, { limit: 1, ttl: 1_200 });
      await sleep(1_500);
      expect(held.held).toBe(true);
      expect(await locks.tryAcquire(k, { limit: 1 })).toBeNull();
      await held.release();
    });

    it('is reentrant along one call chain', async () => {
      const { locks } = await open();
      const k = key('reentrant');
      const tokens = await locks.using(k, async (outer) => locks.using(k, async (inner) => [outer.fencingToken, inner.fencingToken], { limit: 1, waitTimeout: 0 }), { limit: 1 });
      expect(tokens[0]).toBe(tokens[1]);
    });

    it('gives back what a waiter that gave up was granted, to the next waiter', async () => {
      const a = await open();
      const k = key('leave');
      const held = await a.locks.acquire(k, { limit: 1 });
      const controller = new AbortController();
      const b = await open();
      const waiting = nextEvent(b.locks.events$, 'waiting', 10_000);
      const aborted = b.locks.acquire(k, { limit: 1, waitTimeout: 20_000, signal: controller.signal }).catch((e: unknown) => e);
      await waiting;
      const { lock: after } = await queued(k, { limit: 1 });
      controller.abort(new Error('gave up'));
      expect(((await aborted) as Error).message).toBe('gave up');
      await held.release();
      const lock = await after;
      expect(lock.held).toBe(true);
      await lock.release();
    });

    it('names the option in errors for bad limits and permits', async () => {
      const { locks } = await open();
      const k = key('bad');
      await expect(locks.acquire(k, { limit: 0 })).rejects.toThrow(InvalidLockOptionsError);
      await expect(locks.acquire(k, { limit: 1.5 })).rejects.toThrow(/"limit"/);
      await expect(locks.acquire(k, { limit: 3, permits: 4 })).rejects.toThrow(/"permits".*from 1 to limit \(3\)/);
      await expect(locks.acquire(k, { permits: 2 })).rejects.toThrow(/"permits".*"limit"/);
    });
  });
}

/**
 * One backend for several suites of a file: started by the first suite, stopped after the
 * last, so that a Cluster or a set of servers is started once per file.
 */
export function shareBackend(backend: LockBackend, suites: number): LockBackend {
  let started: Promise<void> | undefined;
  let stopped = 0;
  return {
    ...backend,
    open: (options) => backend.open(options),
    steal: (key) => backend.steal(key),
    forgetFence: (key) => backend.forgetFence(key),
    start: () => (started ??= backend.start()),
    stop: async () => {
      if (++stopped === suites) await backend.stop();
    },
  };
}
