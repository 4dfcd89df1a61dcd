import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError, type Lock, type LockEvent, type LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { LAST_ATTEMPT_GRACE_MS } from '../lib/core/engine/waiter-timing.js';
import { blockRedis } from './support/block-redis.js';
import { recordReleases } from './support/mechanism.js';
import { nextEvent, useLockApps } from './support/lock-app.js';
import { useOwnRedis, useRedis } from './support/redis.js';

/** Longer than any bound below (LAST_ATTEMPT_GRACE_MS and the waitTimeout given): a wait that honours its bound ends inside it. */
const BLOCK_MS = LAST_ATTEMPT_GRACE_MS * 2;

/**
 * A greedy caller of `key` (it asked again in the turn its release came back), holding the lock,
 * so that its next release is sent with a park request.
 */
async function greedyHolder(locks: LockService, key: string): Promise<Lock> {
  const first = await locks.acquire(key);
  await first.release();
  return locks.acquire(key);
}

/** Settles with the wall-clock time it settled at (comparable with `blockRedis`'s end). */
const settledAt = (call: Promise<unknown>): Promise<{ at: number; outcome: unknown }> =>
  call.then(
    (outcome) => ({ at: Date.now(), outcome }),
    (error: unknown) => ({ at: Date.now(), outcome: error }),
  );

/**
 * A Redis server of the describe's own: these tests block Redis for seconds, which on the shared
 * test server would stall the other test files' renewals and cost them their locks.
 */

describe('a caller behind a parking release that Redis does not answer', () => {
  const { url } = useOwnRedis();
  const app = useLockApps();

  async function parkOnTheWay(key: string) {
    const { locks } = await app({ redis: url(), fairness: 'barging' });
    const held = await greedyHolder(locks, key);
    const releases = recordReleases(locks);
    const { ended } = await blockRedis(url(), BLOCK_MS);
    const releasing = held.release();
    expect(releases.releases.at(-1)!.park).toBeDefined();
    releases.stop();
    return { locks, ended, releasing };
  }

  it('stops waiting on its AbortSignal, before Redis answers', async () => {
    const { locks, ended, releasing } = await parkOnTheWay('park-abort-wait');
    const controller = new AbortController();
    const waiting = settledAt(locks.acquire('park-abort-wait', { signal: controller.signal, waitTimeout: BLOCK_MS * 4 }));
    controller.abort(new Error('caller gave up'));
    const { at, outcome } = await waiting;
    expect(outcome).toEqual(new Error('caller gave up'));
    expect(at).toBeLessThan((await ended)!);
    await releasing;
  });

  it('gives up by its waitTimeout (and tryAcquire by its grace), as an attempt Redis does not answer does', async () => {
    const { locks, ended, releasing } = await parkOnTheWay('park-bounded-wait');
    const acquiring = settledAt(locks.acquire('park-bounded-wait', { waitTimeout: 100 }));
    const trying = settledAt(locks.tryAcquire('park-bounded-wait'));
    const freeAt = (await ended)!;
    for (const { at, outcome } of [await acquiring, await trying]) {
      // Not the lock itself in a failure message: it would be printed with its service.
      expect(outcome instanceof RedisLockError ? outcome.message : 'a lock, after Redis answered').toContain('did not answer');
      expect(at).toBeLessThan(freeAt);
    }
    await releasing;
  });
});

describe('a caller that waited for a parking release, then for the lock', () => {
  const { url } = useOwnRedis();
  const app = useLockApps();

  it('keeps to its waitTimeout in all: after the wait for the park it has what is left of it, not a new one', async () => {
    const key = 'park-then-wait';
    // A lease shorter than the block: the parking release reaches Redis after the lock ran out,
    // and a caller of another process, sent meanwhile, takes it and keeps it.
    const parking = await app({ redis: url(), fairness: 'barging', ttl: BLOCK_MS / 4 });
    const other = await app({ redis: url(), ttl: 30_000 });
    const held = await greedyHolder(parking.locks, key);
    const releases = recordReleases(parking.locks);
    const { ended } = await blockRedis(url(), BLOCK_MS);
    const releasing = held.release().catch(() => undefined);
    expect(releases.releases.at(-1)!.park).toBeDefined();
    releases.stop();
    const waitTimeout = BLOCK_MS * 1.5;
    // Asked while the park is on its way: it waits for Redis's answer, then for the lock.
    const waiting = settledAt(parking.locks.acquire(key, { waitTimeout }));
    const next = other.locks.acquire(key, { waitTimeout: 30_000 });
    const freeAt = (await ended)!;
    const { outcome, at } = await waiting;
    // Not the lock itself in a failure message: it would be printed with its service.
    expect(outcome instanceof LockNotAcquiredError ? 'not acquired' : String(outcome)).toBe('not acquired');
    // With a new waitTimeout counted from Redis's answer the call would end about waitTimeout
    // after freeAt; with what is left of its own, about waitTimeout - BLOCK_MS after it.
    expect(at - freeAt).toBeLessThan(waitTimeout - BLOCK_MS / 2);
    await releasing;
    await (await next).release();
  });
});

describe('a parking release whose reply is lost', () => {
  // A server of its own: the test blocks it, which would hold up the renewals of files beside it.
  const { url: redisUrl } = useOwnRedis();
  const app = useLockApps();

  it('frees the lock it may have parked: nobody is left waiting for a ttl (the client timed out before the script ran)', async () => {
    // The client gives up on a command after 100 ms; Redis still runs it once free.
    const client = new Redis(redisUrl(), { commandTimeout: 100 });
    try {
      const { locks } = await app({ redis: client, fairness: 'barging', ttl: 30_000 });
      const key = 'park-reply-lost';
      const held = await greedyHolder(locks, key);
      const releases = recordReleases(locks);
      const { ended } = await blockRedis(redisUrl(), 300);
      const releasing = held.release().catch((error: unknown) => error);
      expect(releases.releases.at(-1)!.park).toBeDefined();
      releases.stop();
      await ended;
      expect(await releasing).toBeInstanceOf(Error);
      // Behind whatever the release's failure sent on this connection.
      expect(await locks.isLocked(key)).toBe(false);
    } finally {
      client.disconnect();
    }
  });
});

describe('a lock taken from the park', () => {
  const redis = useRedis();
  const app = useLockApps();

  /** Parks `key`'s lock in `locks` and hands it to a caller with `options` (its second greedy round). */
  async function takenFromPark(locks: LockService, key: string, options: Parameters<LockService['acquire']>[1] = {}) {
    const releases = recordReleases(locks);
    const first = await greedyHolder(locks, key);
    await first.release();
    const lock = await locks.acquire(key, options);
    expect(releases.releases.at(-1)!.parked).toBe(true);
    expect(releases.releases.length).toBe(2);
    releases.stop();
    return { lock, parkToken: releases.releases.at(-1)!.park! };
  }

  it('is renewed by the watchdog under its park token, and its fencing token is the one the park took', async () => {
    // Renewals counted, not a lease outlived: a 300 ms ttl outlived by a 1 s sleep lost its lease
    // on a loaded machine (a renewal timer run late). A renewal is reported only once Redis took
    // it under the token the lock holds; one sent under another token loses the lock instead.
    const { locks } = await app({ fairness: 'barging', ttl: 5_000, renewInterval: 100 });
    const seen: LockEvent[] = [];
    const recording = locks.events$.subscribe((event) => event.key === 'park-renewed' && seen.push(event));
    const { lock, parkToken } = await takenFromPark(locks, 'park-renewed');
    expect(await redis.get('lock:{park-renewed}')).toBe(parkToken);
    expect(Number(await redis.get('lock:{park-renewed}:fence'))).toBe(lock.fencingToken);
    const ofThisLock = () => seen.filter((event) => event.type === 'lost' || (event.type === 'renewed' && event.fencingToken === lock.fencingToken));
    await expect.poll(() => ofThisLock().length).toBeGreaterThanOrEqual(3);
    recording.unsubscribe();
    expect(ofThisLock().every((event) => event.type === 'renewed')).toBe(true);
    expect(lock.held).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    expect(await redis.get('lock:{park-renewed}')).toBe(parkToken);
    await lock.extend();
    await lock.release();
  });

  it('comes without a fencing token to a caller that asked for none (fencing: false)', async () => {
    const { locks } = await app({ fairness: 'barging' });
    const { lock } = await takenFromPark(locks, 'park-unfenced', { fencing: false });
    expect(lock.fencingToken).toBeUndefined();
    await lock.release();
  });

  it('is given back by app.close() when the parking release is still on its way', async () => {
    const greedy = await app({ fairness: 'barging', ttl: 30_000 });
    const releases = recordReleases(greedy.locks);
    const held = await greedyHolder(greedy.locks, 'park-close-in-flight');
    const releasing = held.release();
    const parking = releases.releases.at(-1)!;
    expect(parking.park).toBeDefined();
    await greedy.close();
    await releasing;
    // It parked, and the close freed it under the park token.
    expect(parking.parked).toBe(true);
    expect(releases.releases.at(-1)!.token).toBe(parking.park);
    expect(await redis.exists('lock:{park-close-in-flight}')).toBe(0);
  });
});

describe('a barging waiter of the greedy process itself', () => {
  useRedis();
  const app = useLockApps();

  it("is served under its own process' greedy loop: the streak bound counts it among the barging waiters", async () => {
    const { locks } = await app({ fairness: 'barging' });
    const key = 'park-own-waiter';
    const releases = recordReleases(locks);
    let held = await greedyHolder(locks, key);
    // Asked while the loop holds the lock and no park is on its way: it waits in Redis.
    const waiting = locks.acquire(key, { waitTimeout: 20_000 });
    const served = waiting.then(() => undefined);
    let rounds = 0;
    for (;;) {
      await held.release();
      const taking = locks.acquire(key, { waitTimeout: 20_000 });
      // Wrapped: the loop's next lock may come only after the waiter's release.
      const taken = await Promise.race([taking.then((lock) => ({ lock })), served]);
      if (taken === undefined) {
        const lock = await waiting;
        expect(lock.held).toBe(true);
        await lock.release();
        await (await taking).release();
        break;
      }
      held = taken.lock;
      rounds++;
    }
    // The loop parked over it, then a plain release let it in.
    expect(releases.releases.some((release) => release.parked === true && release.contended === true)).toBe(true);
    expect(rounds).toBeGreaterThan(0);
    releases.stop();
  });
});

describe('a parking release that throws before it is sent', () => {
  useRedis();
  const app = useLockApps();

  it('leaves the key usable: the next acquire is not held up by a park that never went out', async () => {
    const { locks } = await app({ fairness: 'barging', ttl: 300, autoRenew: false });
    const key = 'park-sync-throw';
    const held = await greedyHolder(locks, key);
    // A driver that throws at once (a closed client, say) instead of rejecting.
    type Store = { release(...args: unknown[]): unknown };
    const store = (locks[LOCK_RUNNER] as unknown as { store: Store }).store;
    store.release = () => {
      throw new Error('driver threw');
    };
    await expect(held.release()).rejects.toThrow('driver threw');
    delete (store as Partial<Store>).release;
    // The lock runs out by its lease (300 ms); then the key is free again.
    const next = await locks.acquire(key, { waitTimeout: 10_000 });
    expect(next.held).toBe(true);
    await next.release();
  });
});

describe('a parking release when Redis memory is full (maxmemory reached, noeviction)', () => {
  const own = useOwnRedis();
  const app = useLockApps();

  it('frees the lock as a plain release does, where the park is refused: not left held under the releaser for its ttl', async () => {
    const admin = own.redis();
    const { locks } = await app({ redis: own.url(), fairness: 'barging', ttl: 30_000 });
    const key = 'park-oom';
    const held = await greedyHolder(locks, key);
    const releases = recordReleases(locks);
    await admin.config('SET', 'maxmemory', '1');
    let outcome: unknown;
    try {
      await expect(admin.set('oom:probe', 'x')).rejects.toThrow(/OOM/);
      outcome = await held.release().then(
        () => 'released',
        (error: unknown) => error,
      );
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    // It asked to park, and Redis answered a plain release.
    expect(releases.releases[0]!.park).toBeDefined();
    expect(releases.releases[0]!.parked).toBe(false);
    releases.stop();
    expect(outcome).toBe('released');
    expect(await admin.exists(`lock:{${key}}`)).toBe(0);
  });
});

describe('a caller that waited for its process’ parking release, then took the parked lock', () => {
  const own = useOwnRedis();
  const app = useLockApps();

  it('reports the wait in its acquired event (waitedMs counted from its call)', async () => {
    const BLOCKED_MS = 400;
    const { locks } = await app({ redis: own.url(), fairness: 'barging', ttl: 30_000 });
    const key = 'park-waited-ms';
    const held = await greedyHolder(locks, key);
    const releases = recordReleases(locks);
    await blockRedis(own.url(), BLOCKED_MS);
    const releasing = held.release();
    expect(releases.releases.at(-1)!.park).toBeDefined();
    const acquiredEvent = nextEvent(locks.events$, 'acquired', 10_000);
    const calledAt = performance.now();
    const lock = await locks.acquire(key, { waitTimeout: 10_000 });
    const waited = performance.now() - calledAt;
    await releasing;
    // It took the parked lock: the park token is its token (no attempt of its own).
    expect(releases.releases.at(-1)!.parked).toBe(true);
    expect((lock as unknown as { token: string }).token).toBe(releases.releases.at(-1)!.park);
    releases.stop();
    const event = await acquiredEvent;
    // What the event says is what the caller measured (it waited behind the blocked server).
    expect(event.waitedMs).toBeGreaterThan(waited / 2);
    await lock.release();
  });
});

describe('a FIFO lock of a key that barging callers of the same process take greedily', () => {
  useRedis();
  const app = useLockApps();

  it('is released without a park request: a FIFO lock is never parked', async () => {
    const { locks } = await app({ fairness: 'barging', ttl: 30_000 });
    const key = 'park-mixed-fifo';
    const releases = recordReleases(locks);
    const first = await greedyHolder(locks, key);
    await first.release();
    // The parked lock, taken in the turn its release came back.
    const barging = await locks.acquire(key);
    // A FIFO caller of the same process queues behind it...
    const fifo = locks.acquire(key, { fairness: 'fifo', waitTimeout: 10_000 });
    await expect.poll(async () => (await locks.inspect(key)).waiters).toBe(1);
    await barging.release();
    // ...and a barging caller asks in the turn that release came back (it waits behind the FIFO holder).
    const next = locks.acquire(key, { waitTimeout: 10_000 });
    const fifoLock = await fifo;
    const before = releases.releases.length;
    await fifoLock.release();
    const fifoRelease = releases.releases[before]!;
    expect(fifoRelease.token).toBe((fifoLock as unknown as { token: string }).token);
    await (await next).release();
    releases.stop();
    expect(fifoRelease.park).toBeUndefined();
  });
});
