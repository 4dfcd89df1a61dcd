import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockLostError, LockNotAcquiredError, NoFencingTokenError, type Lock, type RedisLockModuleOptions } from '../../lib/index.js';
import { WAITER_LEASE_MS } from '../../lib/core/engine/lock-manager.js';
import { countAttempts, holdPolls, leaseDeadline } from '../support/mechanism.js';
import { nextEvent, sleep, type LockApp } from '../support/lock-app.js';

/**
 * A place locks live, as the behaviour suite sees it: Redis (one node, a Cluster, a quorum,
 * through ioredis or node-redis) or the in-memory store. Every backend must pass the same suite;
 * a difference between them is a bug in one of them.
 */
export interface LockBackend {
  /** Starts what the backend needs (servers); called once before the suite. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** An application on this backend, as a separate instance on the same store would be. */
  open(options?: Partial<RedisLockModuleOptions>): Promise<LockApp>;
  /** Deletes a lock behind its holder's back, as an operator or an eviction would. */
  steal(key: string): Promise<void>;
  /**
   * Deletes a key's fencing counter, as a restart without persistence, an eviction or an expired
   * `fenceRetention` would (in quorum mode on one master: a majority's counters are the tokens).
   */
  forgetFence(key: string): Promise<void>;
  /** Whether waiters queue in FIFO order and are woken by release messages (not in quorum mode). */
  readonly queues: boolean;
  /** The applications' module-wide `fairness` (see `barging()` in barging-behaviour.ts); FIFO when left out. */
  readonly fairness?: 'fifo' | 'barging';
}

/**
 * The per-suite harness every behaviour suite shares: starts the backend once, opens
 * applications on it (closed after each test), and names keys no other test uses, so that a
 * backend shared by the tests needs no flushing.
 */
export function useBackend(backend: LockBackend, keyPrefix: string): {
  open(options?: Partial<RedisLockModuleOptions>): Promise<LockApp>;
  key(name: string): string;
} {
  const apps: LockApp[] = [];
  let run = 0;
  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  return {
    async open(options = {}) {
      const app = await backend.open(options);
      apps.push(app);
      return app;
    },
    key: (name) => `${keyPrefix}:${process.pid}:${++run}:${name}`,
  };
}

/** The behaviour every backend promises, through the public API only. */
export function describeLockBehaviour(label: string, backend: LockBackend): void {
  describe(`lock behaviour: ${label}`, () => {
    const { open, key } = useBackend(backend, 'behaviour');

    it('acquires, reports and releases a lock', async () => {
      const { locks } = await open();
      const k = key('basic');
      const lock = await locks.acquire(k);
      expect(lock.held).toBe(true);
      expect(lock.fencingToken).toBeGreaterThan(0);
      expect(await locks.isLocked(k)).toBe(true);
      await lock.release();
      await lock.release(); // idempotent
      expect(lock.held).toBe(false);
      expect(lock.signal.aborted).toBe(false);
      expect(await locks.isLocked(k)).toBe(false);
    });

    it('hands out a higher fencing token than before its counter was lost (a restart without persistence, an eviction)', async () => {
      const { locks } = await open();
      const k = key('counter-lost');
      let last = 0;
      for (let i = 0; i < 3; i++) {
        const lock = await locks.acquire(k);
        last = lock.fencingToken;
        await lock.release();
      }
      // A new counter starts at the clock in milliseconds: higher than a counter that took fewer
      // tokens than milliseconds went by since it began (three tokens, ten milliseconds here).
      await sleep(10);
      await backend.forgetFence(k);
      const lock = await locks.acquire(k);
      expect(lock.fencingToken).toBeGreaterThan(last);
      await lock.release();
    });

    // Found by review for the in-memory store, whose new counters started at the milliseconds
    // since the process started: a fenced resource outlives the process (a database row keeps the
    // highest token it saw), and the next process' tokens came out below the last one's.
    it("starts a key's fencing counter at the wall clock in milliseconds, so that a process started again hands out higher tokens", async () => {
      const { locks } = await open();
      const k = key('counter-starts-at-wall-clock');
      // A new counter, should another suite on this store have used the key's name.
      await backend.forgetFence(k);
      const before = Date.now();
      const lock = await locks.acquire(k);
      await lock.release();
      // A second of slack for a Redis clock behind this process' (the same machine here).
      expect(lock.fencingToken).toBeGreaterThanOrEqual(before - 1_000);
    });

    it('excludes another instance, which gets the lock once it is released, with a higher fencing token', async () => {
      const a = await open();
      const b = await open();
      const k = key('exclusion');
      const held = await a.locks.acquire(k);
      expect(await b.locks.tryAcquire(k)).toBeNull();
      await expect(b.locks.acquire(k, { waitTimeout: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
      const attempts = countAttempts(b.locks);
      const waiting = b.locks.acquire(k, { waitTimeout: 10_000 });
      // Waiting (subscribed, an attempt answered since), however long that took.
      await attempts.answered();
      await held.release();
      const next = await waiting;
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      await next.release();
    });

    it('never lets two holders overlap under contention, and counts correctly', async () => {
      const instances = await Promise.all([open(), open(), open()]);
      const k = key('counter');
      let inside = 0;
      let overlaps = 0;
      let counter = 0;
      const tokens: number[] = [];
      await Promise.all(
        instances.flatMap(({ locks }) =>
          Array.from({ length: 2 }, async () => {
            for (let i = 0; i < 10; i++) {
              await locks.using(
                k,
                async (lock) => {
                  if (++inside > 1) overlaps++;
                  tokens.push(lock.fencingToken);
                  const read = counter;
                  await sleep(1);
                  counter = read + 1;
                  inside--;
                },
                { waitTimeout: 20_000 },
              );
            }
          }),
        ),
      );
      expect(overlaps).toBe(0);
      expect(counter).toBe(60);
      expect(tokens).toEqual([...tokens].sort((x, y) => x - y));
      expect(new Set(tokens).size).toBe(60);
    });

    it('serves waiters in arrival order and wakes the next one on release', async () => {
      if (!backend.queues) return; // quorum mode: waiters poll, by design (see "Running at scale")
      if (backend.fairness === 'barging') return; // no arrival order: see barging-behaviour.ts
      const holder = await open();
      const k = key('fifo');
      const held = await holder.locks.acquire(k);
      const order: number[] = [];
      const waiters = await Promise.all([open(), open(), open()]);
      // The first waiter never polls: only the release can wake it.
      const polls = holdPolls(waiters[0]!.locks);
      const attempts = countAttempts(waiters[0]!.locks);
      const done: Promise<void>[] = [];
      for (const [i, waiter] of waiters.entries()) {
        // Arrive in turn: the next one asks once this one's attempt has queued it (a fixed
        // pause let a waiter slowed by a loaded machine queue behind the next one).
        const queued = countAttempts(waiter.locks);
        done.push(waiter.locks.using(k, async () => void order.push(i), { waitTimeout: 10_000 }));
        await queued.answered();
        queued.stop();
      }
      await attempts.listening();
      const polled = attempts.count;
      const first = nextEvent(waiters[0]!.locks.events$, 'acquired');
      await held.release();
      await first;
      polls.resume();
      // Woken by the release (message or local handoff): no attempt after it.
      expect(attempts.count).toBe(polled);
      await Promise.all(done);
      expect(order).toEqual([0, 1, 2]);
    });

    it('hands a lock to a waiter whose process watched the key already after one attempt, with no renewal for a short hold', async () => {
      if (!backend.queues || backend.fairness === 'barging') return;
      const holder = await open({ ttl: 30_000 });
      const waiter = await open({ ttl: 30_000 });
      const k = key('watched');
      const held = await holder.locks.acquire(k);
      // The waiters never poll: every attempt they make is one the engine chose to make at once.
      const polls = holdPolls(waiter.locks);
      // A first waiter makes the waiting process watch the key's releases.
      const first = countAttempts(waiter.locks);
      const giveUp = new AbortController();
      const firstWaiting = waiter.locks.acquire(k, { waitTimeout: 10_000, signal: giveUp.signal }).catch((error: unknown) => error);
      await first.listening();
      first.stop();
      const attempts = countAttempts(waiter.locks);
      const renewals: (number | undefined)[] = [];
      waiter.locks.events$.subscribe((event) => event.type === 'renewed' && renewals.push(event.fencingToken));
      const calledAt = performance.now();
      const second = waiter.locks.acquire(k, { waitTimeout: 10_000 });
      // Once the second waiter's attempt is answered, the first leaves and the lock is
      // released: the release message, sent after that attempt, must reach the second one.
      await attempts.listening();
      giveUp.abort(new Error('left'));
      await firstWaiting;
      await held.release();
      const lock = await second;
      polls.resume();
      // One attempt: no second one after subscribing (the subscription was live before it was
      // sent), and woken by the release.
      expect(attempts.countFor(lock)).toBe(1);
      expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
      // A short critical section: released before its first renewal was due (a third into the
      // grant lease, which counts from its attempt, sent after calledAt), it had none. A
      // machine too slow for that proves nothing here, and is not held against the lock. The
      // pause lets a renewal made too early happen.
      await sleep(20);
      const releasedAt = performance.now();
      await lock.release();
      if (releasedAt < calledAt + WAITER_LEASE_MS / 3) expect(renewals).not.toContain(lock.fencingToken);
    });

    it('renews a handed-over lock held past a third of its grant lease to the full ttl, and keeps it', async () => {
      if (!backend.queues || backend.fairness === 'barging') return; // barging: a freed lock is taken on the full ttl
      const holder = await open({ ttl: 30_000 });
      const waiter = await open({ ttl: 30_000 });
      const other = await open();
      const k = key('granted-renewed');
      const held = await holder.locks.acquire(k);
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(k, { waitTimeout: 10_000 });
      await attempts.watching();
      await held.release();
      const lock = await waiting;
      const grantDeadline = leaseDeadline(lock);
      const renewed = nextEvent(waiter.locks.events$, 'renewed', 10_000);
      expect((await renewed).fencingToken).toBe(lock.fencingToken);
      // Renewed to the full ttl (30 s), far past the grant lease (1 s).
      expect(leaseDeadline(lock) - grantDeadline).toBeGreaterThan(20_000);
      while (performance.now() <= grantDeadline) await sleep(50);
      expect(lock.held).toBe(true);
      expect(lock.signal.aborted).toBe(false);
      expect(await other.locks.tryAcquire(k)).toBeNull();
      await lock.release();
    });

    it('lets the next holder in once a crashed holder lease runs out, and tells the old holder', async () => {
      const a = await open({ ttl: 400, autoRenew: false });
      const b = await open();
      const k = key('crash');
      const lost = await a.locks.acquire(k);
      const next = await b.locks.acquire(k, { waitTimeout: 5_000 });
      // Not before the old lease ran out: its holder's deadline is the earliest the store can
      // have let it go (counted from before its acquire was sent), on the same clock.
      expect(performance.now()).toBeGreaterThanOrEqual(leaseDeadline(lost));
      expect(next.fencingToken).toBeGreaterThan(lost.fencingToken);
      // Told by reading `held`: the signal aborts on the deadline sweeper's timer, and a loaded
      // machine ran the acquire's reply first (docs/locks.md, `signal`).
      expect(lost.held).toBe(false);
      expect(lost.signal.aborted).toBe(true);
      expect(lost.signal.reason).toBeInstanceOf(LockLostError);
      expect(lost.signal.reason).toMatchObject({ reason: 'expired' });
      await next.release();
    });

    it('keeps a lock past its ttl while the watchdog renews it', async () => {
      // Renewals every 200 ms on a 1.2 s lease: a loaded machine may stall the watchdog for a
      // second and the lock is still kept, which a 400 ms lease did not survive.
      const { locks } = await open({ ttl: 1_200, renewInterval: 200 });
      const other = await open();
      const k = key('renewed');
      const lock = await locks.acquire(k);
      const deadline = leaseDeadline(lock);
      await sleep(1_500);
      // Past the first lease's deadline, so only renewals can have kept it.
      expect(performance.now()).toBeGreaterThan(deadline);
      expect(lock.held).toBe(true);
      expect(await other.locks.tryAcquire(k)).toBeNull();
      await lock.release();
    });

    it('aborts the signal when the lock is taken away, and does not touch the next holder', async () => {
      const { locks } = await open({ ttl: 2_000, renewInterval: 100 });
      const other = await open();
      const k = key('stolen');
      const lock = await locks.acquire(k);
      await backend.steal(k);
      const next = await other.locks.acquire(k, { waitTimeout: 2_000 });
      await new Promise((resolve) => (lock.signal.aborted ? resolve(undefined) : lock.signal.addEventListener('abort', resolve, { once: true })));
      expect(lock.signal.reason).toMatchObject({ reason: 'refused' });
      await lock.release().catch(() => undefined);
      expect(next.held).toBe(true);
      expect(await other.locks.isLocked(k)).toBe(true);
      await next.release();
    });

    it('re-enters within one call chain and shares the lease', async () => {
      // The outer call waits as long as a call does by default: in quorum mode a round its masters
      // left unanswered in time (500 ms, a loaded machine) is asked again within it. The nested
      // call does not wait: one that did not re-enter would find the lock busy and fail at once.
      const { locks } = await open();
      const k = key('reentrant');
      const result = await locks.using(k, async (outer) =>
        locks.using(
          k,
          async (inner) => {
            expect(inner.fencingToken).toBe(outer.fencingToken);
            expect(locks.current(k)?.fencingToken).toBe(outer.fencingToken);
            expect(inner.held).toBe(true);
            return 'nested';
          },
          { waitTimeout: 0 },
        ),
      );
      expect(result).toBe('nested');
      expect(await locks.isLocked(k)).toBe(false);
    });

    it('ends a wait on its signal, and the departed waiter never gets the lock', async () => {
      const holder = await open();
      const waiter = await open();
      const third = await open();
      const k = key('abort');
      const held = await holder.locks.acquire(k);
      const controller = new AbortController();
      const waiterAttempts = countAttempts(waiter.locks);
      const aborted = waiter.locks.acquire(k, { waitTimeout: 10_000, signal: controller.signal }).catch((e: unknown) => e);
      await waiterAttempts.answered();
      const thirdAttempts = countAttempts(third.locks);
      const thirdWaiting = third.locks.acquire(k, { waitTimeout: 10_000 });
      // Both wait (in this order, where waiters queue) before the first leaves.
      await thirdAttempts.answered();
      controller.abort(new Error('no longer needed'));
      expect(await aborted).toMatchObject({ message: 'no longer needed' });
      await held.release();
      const lock = await thirdWaiting;
      expect(lock.held).toBe(true);
      await lock.release();
    });

    it('extends a lease on demand', async () => {
      const { locks } = await open({ ttl: 300, autoRenew: false });
      const other = await open();
      const k = key('extend');
      const lock: Lock = await locks.acquire(k);
      const firstDeadline = leaseDeadline(lock);
      // Far longer than any stall: still held once the first lease has run out, however late.
      await lock.extend(60_000);
      while (performance.now() <= firstDeadline + 300) await sleep(50);
      expect(lock.held).toBe(true);
      expect(await other.locks.tryAcquire(k)).toBeNull();
      await lock.release();
    });

    it('says who holds a lock and how many wait for it', async () => {
      const holder = await open({ instanceName: 'behaviour-holder' });
      const waiter = await open();
      const k = key('inspect');
      const held = await holder.locks.acquire(k, { label: 'nightly <report>' });
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire(k, { waitTimeout: 10_000 });
      // Waiting (queued, where waiters queue), however long that took.
      await attempts.answered();
      const seen = await waiter.locks.inspect(k);
      expect(seen).toMatchObject({ key: k, held: true, fencingToken: held.fencingToken });
      expect(seen.holder).toMatchObject({ instance: 'behaviour-holder', label: 'nightly <report>', pid: process.pid });
      // Barging waiters do not queue: `waiters` counts the queue.
      if (backend.queues) expect(seen.waiters).toBe(backend.fairness === 'barging' ? 0 : 1);
      await held.release();
      await (await waiting).release();
      expect(await waiter.locks.inspect(k)).toMatchObject({ held: false });
    });

    it('takes a lock without a fencing token (fencing: false): none on the lock, its events or through current()', async () => {
      const { locks } = await open();
      const rival = await open();
      const k = key('unfenced');
      const acquired = nextEvent(locks.events$, 'acquired');
      const lock = await locks.acquire(k, { fencing: false });
      expect(lock.held).toBe(true);
      expect(lock.fencingToken).toBeUndefined();
      expect((await acquired).fencingToken).toBeUndefined();
      // Still a lock: a rival is kept out until it is released.
      expect(await rival.locks.tryAcquire(k)).toBeNull();
      await lock.release();
      const tried = await locks.tryAcquire(k, { fencing: false });
      expect(tried?.fencingToken).toBeUndefined();
      await tried?.release();
      await locks.using(
        k,
        async (held) => {
          expect(held.fencingToken).toBeUndefined();
          // current() is typed Lock, whose token is a number: reading it fails instead.
          const current = locks.current()!;
          expect(current.held).toBe(true);
          expect(() => current.fencingToken).toThrow(NoFencingTokenError);
          expect(() => current.fencingToken).toThrow(/was taken with fencing: false and has no fencing token/);
          // A nested call that needs a token cannot share it; one that does not re-enters.
          await expect(locks.acquire(k)).rejects.toThrow(InvalidLockOptionsError);
          const nested = await locks.acquire(k, { fencing: false });
          expect(nested.fencingToken).toBeUndefined();
          await nested.release();
        },
        { fencing: false },
      );
      const many = await locks.acquire([key('unfenced-a'), key('unfenced-b')], { fencing: false });
      expect(many.fencingTokens).toBeUndefined();
      expect(many.fencingToken).toBeUndefined();
      await many.release();
    });

    it('keeps fenced tokens increasing across unfenced holders of the same key', async () => {
      const { locks } = await open();
      const k = key('mixed');
      const first = await locks.acquire(k);
      await first.release();
      await (await locks.acquire(k, { fencing: false })).release();
      await locks.using(k, async (outer) => {
        expect(outer.fencingToken).toBeGreaterThan(first.fencingToken);
        // An unfenced nested call of a fenced lock gets no token either.
        const nested = await locks.acquire(k, { fencing: false });
        expect(nested.fencingToken).toBeUndefined();
        await nested.release();
      });
    });

    it('gives back every lock it holds when the application closes', async () => {
      const a = await backend.open();
      const b = await open();
      const k = key('shutdown');
      const lock = await a.locks.acquire(k);
      await a.close();
      expect(lock.signal.reason).toMatchObject({ reason: 'shutdown' });
      expect(await b.locks.isLocked(k)).toBe(false);
    });
  });
}
