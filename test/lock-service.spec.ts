import { afterEach, describe, expect, it } from 'vitest';
import {
  InvalidLockOptionsError,
  LockKeyError,
  LockNotAcquiredError,
  RedisLockError,
  type LockEvent,
} from '../lib/index.js';
import { createLockApp, sleep, type LockApp } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

describe('LockService', () => {
  const redis = useRedis();
  let app: LockApp;
  afterEach(() => app?.close());

  /** Runs `fn` under the lock and records when it was inside, on one shared timeline. */
  async function timedSection(key: string, log: [string, number, number][], label: string, ms: number) {
    await app.locks.using(key, async () => {
      const start = performance.now();
      await sleep(ms);
      log.push([label, start, performance.now()]);
    });
  }

  it('keeps two concurrent using() calls on one key from overlapping', async () => {
    app = await createLockApp();
    const log: [string, number, number][] = [];
    await Promise.all([timedSection('k', log, 'a', 150), timedSection('k', log, 'b', 150)]);
    const [first, second] = log.sort((x, y) => x[1] - y[1]);
    expect(second![1]).toBeGreaterThanOrEqual(first![2]);
  });

  it('runs using() calls on different keys in parallel', async () => {
    app = await createLockApp();
    const log: [string, number, number][] = [];
    await Promise.all([timedSection('k1', log, 'a', 300), timedSection('k2', log, 'b', 300)]);
    const [first, second] = log.sort((x, y) => x[1] - y[1]);
    expect(second![1]).toBeLessThan(first![2]);
  });

  it('keeps many concurrent read-modify-write sections exact', async () => {
    app = await createLockApp({ waitTimeout: 20_000 });
    let counter = 0;
    let inside = 0;
    let overlaps = 0;
    await Promise.all(
      Array.from({ length: 40 }, () =>
        app.locks.using('counter', async () => {
          if (++inside > 1) overlaps++;
          const read = counter;
          await sleep(Math.random() * 3);
          counter = read + 1;
          inside--;
        }),
      ),
    );
    expect(overlaps).toBe(0);
    expect(counter).toBe(40);
  });

  it('releases the lock when fn throws and rethrows the same error', async () => {
    app = await createLockApp();
    const boom = new Error('boom');
    await expect(
      app.locks.using('k', async () => {
        expect(await redis.exists('lock:{k}')).toBe(1);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await redis.exists('lock:{k}')).toBe(0);
    await expect(app.locks.using('k', () => { throw boom; })).rejects.toBe(boom);
    expect(await redis.exists('lock:{k}')).toBe(0);
  });

  it("returns fn's value unchanged, sync or async", async () => {
    app = await createLockApp();
    const value = { a: 1 };
    expect(await app.locks.using('k', () => value)).toBe(value);
    expect(await app.locks.using('k', async () => value)).toBe(value);
  });

  it('tryAcquire returns null while the lock is held, and the lock once it is free', async () => {
    app = await createLockApp();
    const held = await app.locks.acquire('k');
    expect(await app.locks.tryAcquire('k')).toBeNull();
    await held.release();
    const lock = await app.locks.tryAcquire('k');
    expect(lock?.held).toBe(true);
    await lock!.release();
  });

  it('acquire gives up after waitTimeout with LockNotAcquiredError', async () => {
    app = await createLockApp();
    await redis.set('lock:{k}', 'someone-else', 'PX', 10_000);
    const started = performance.now();
    const error = await app.locks.acquire('k', { waitTimeout: 300 }).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as LockNotAcquiredError).key).toBe('k');
    expect((error as Error).message).toMatch(/Lock "k" was not acquired within its waitTimeout of 300 ms \(\d+ ms after the call\): another holder kept it/);
    expect(waited).toBeGreaterThanOrEqual(295);
    expect(await redis.get('lock:{k}')).toBe('someone-else');
  });

  it('waitTimeout 0 fails at once when busy', async () => {
    app = await createLockApp();
    await redis.set('lock:{k}', 'someone-else', 'PX', 10_000);
    await expect(app.locks.acquire('k', { waitTimeout: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    await expect(app.locks.using('k', () => 1, { waitTimeout: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
  });

  it('a waiter gets the lock once the holder releases', async () => {
    app = await createLockApp();
    const held = await app.locks.acquire('k');
    setTimeout(() => void held.release(), 100);
    const lock = await app.locks.acquire('k', { waitTimeout: 5_000 });
    // The release's grant (the next token), or under load that grant confirmed by the waiter's
    // next attempt once its short lease had run out here (a token later still).
    expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
    await lock.release();
  });

  it('a waiter gets the lock once a crashed holder lease expires', async () => {
    app = await createLockApp();
    await redis.set('lock:{k}', 'crashed-holder', 'PX', 200);
    const lock = await app.locks.acquire('k', { waitTimeout: 2_000 });
    expect(await redis.get('lock:{k}')).not.toBe('crashed-holder');
    await lock.release();
  });

  it("an AbortSignal ends the wait with the signal's reason", async () => {
    app = await createLockApp();
    await redis.set('lock:{k}', 'someone-else', 'PX', 10_000);
    const controller = new AbortController();
    const reason = new Error('client went away');
    setTimeout(() => controller.abort(reason), 100);
    await expect(app.locks.acquire('k', { waitTimeout: 5_000, signal: controller.signal })).rejects.toBe(reason);
    await expect(app.locks.acquire('k', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(await redis.get('lock:{k}')).toBe('someone-else');
  });

  it('isLocked tells whether anyone holds the key', async () => {
    app = await createLockApp();
    expect(await app.locks.isLocked('k')).toBe(false);
    const lock = await app.locks.acquire('k');
    expect(await app.locks.isLocked('k')).toBe(true);
    await lock.release();
    expect(await app.locks.isLocked('k')).toBe(false);
  });

  it('current() returns the lock of the running using() chain only', async () => {
    app = await createLockApp();
    expect(app.locks.current()).toBeUndefined();
    await app.locks.using('outer', async (outer) => {
      expect(app.locks.current()).toBe(outer);
      await app.locks.using('inner', async (inner) => {
        expect(app.locks.current()).toBe(inner);
        expect(app.locks.current('outer')).toBe(outer);
        expect(app.locks.current('other')).toBeUndefined();
      });
      expect(app.locks.current()).toBe(outer);
    });
    expect(app.locks.current()).toBeUndefined();
  });

  it('release is idempotent and a released lock cannot be extended', async () => {
    app = await createLockApp();
    const lock = await app.locks.acquire('k');
    await lock.release();
    await lock.release();
    expect(lock.held).toBe(false);
    expect(lock.signal.aborted).toBe(false);
    await expect(lock.extend()).rejects.toThrow(/Lock "k" was released; acquire it again/);
  });

  it('stores locks under the prefix with a hash tag, whatever the key contains', async () => {
    app = await createLockApp({ keyPrefix: 'app1:' });
    for (const key of ['{a}', '}b', 'c}d{', 'ünï 🔒']) {
      const lock = await app.locks.acquire(key);
      const names = await redis.keys('app1:*');
      expect(names.length).toBeGreaterThanOrEqual(2);
      await lock.release();
    }
    expect((await redis.keys('*')).every((name) => name.startsWith('app1:') && name.endsWith(':fence'))).toBe(true);
  });

  it('emits acquired, released and not-acquired events with key, fencing token and timing', async () => {
    app = await createLockApp();
    const events: LockEvent[] = [];
    const subscription = app.locks.events$.subscribe((event) => events.push(event));
    const lock = await app.locks.acquire('k');
    expect(await app.locks.tryAcquire('k')).toBeNull();
    await lock.release();
    subscription.unsubscribe();
    expect(events.map((event) => event.type)).toEqual(['acquired', 'not-acquired', 'released']);
    expect(events[0]).toMatchObject({ type: 'acquired', key: 'k', fencingToken: lock.fencingToken });
    expect(events[2]).toMatchObject({ type: 'released', key: 'k', fencingToken: lock.fencingToken });
    for (const event of events) {
      expect(event.at).toBeGreaterThan(Date.now() - 10_000);
      const duration = 'waitedMs' in event ? event.waitedMs : 'heldMs' in event ? event.heldMs : -1;
      expect(duration).toBeGreaterThanOrEqual(0);
    }
  });

  it('rejects bad keys and options before anything reaches Redis', async () => {
    app = await createLockApp();
    await expect(app.locks.acquire('')).rejects.toBeInstanceOf(LockKeyError);
    await expect(app.locks.acquire(42 as unknown as string)).rejects.toThrow(/must be a string, got number/);
    await expect(app.locks.tryAcquire(undefined as unknown as string)).rejects.toBeInstanceOf(LockKeyError);
    await expect(app.locks.using(null as unknown as string, () => 1)).rejects.toBeInstanceOf(LockKeyError);
    await expect(app.locks.isLocked('')).rejects.toBeInstanceOf(LockKeyError);
    await expect(app.locks.acquire('k', { ttl: -5 })).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(app.locks.acquire('k', { waitTimeout: Number.NaN })).rejects.toThrow(/Option "waitTimeout"/);
    await expect(app.locks.using('k', 'nope' as never)).rejects.toThrow(/fn must be a function, got string/);
    const lock = await app.locks.acquire('k');
    await expect(lock.extend(-1)).rejects.toThrow(/Option "ttl"/);
    await lock.release();
    expect(await redis.keys('*')).toEqual(['lock:{k}:fence']);
  });
});
