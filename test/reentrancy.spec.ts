import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError } from '../lib/index.js';
import { createLockApp, sleep, type LockApp } from './support/lock-app.js';
import { isScriptCall, watchCommands } from './support/monitor.js';
import { useRedis } from './support/redis.js';

describe('reentrancy per async call chain', () => {
  const redis = useRedis();
  let app: LockApp;
  afterEach(() => app?.close());

  it('lets a nested using() of the held key run at once, without a Redis round trip', async () => {
    app = await createLockApp({ waitTimeout: 500 });
    // Scripts cached first: on a fresh server each would go out twice (EVALSHA, then EVAL).
    await app.locks.using('warm-up', () => undefined);
    const commands = await watchCommands('lock:{k}');
    const result = await app.locks.using('k', async (outer) => {
      const inner = await app.locks.using('k', async (nested) => {
        expect(nested.fencingToken).toBe(outer.fencingToken);
        expect(nested.signal).toBe(outer.signal);
        const deeper = await app.locks.acquire('k');
        await deeper.release();
        expect(deeper.held).toBe(false);
        return 'inner';
      });
      // The nested holders are done, the outer still holds the lock in Redis.
      expect(outer.held).toBe(true);
      expect(await redis.exists('lock:{k}')).toBe(1);
      return inner;
    });
    await commands.stop();
    expect(result).toBe('inner');
    // One acquire and one release in Redis for the three holders.
    expect(commands.seen.filter(isScriptCall).length).toBe(2);
    expect(await redis.exists('lock:{k}')).toBe(0);
  });

  it('makes two concurrent chains of one process exclude each other', async () => {
    app = await createLockApp({ waitTimeout: 5_000 });
    const spans: [number, number][] = [];
    const section = () =>
      app.locks.using('k', async () => {
        const start = performance.now();
        await app.locks.using('k', () => sleep(100));
        spans.push([start, performance.now()]);
      });
    await Promise.all([section(), section(), section()]);
    spans.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
  });

  it('shares the hold with work the holder starts, not with chains started elsewhere', async () => {
    app = await createLockApp({ waitTimeout: 0 });
    let go!: () => void;
    const started = new Promise<void>((resolve) => (go = resolve));
    // This chain begins outside the holder, so it must contend even while the holder runs.
    const outsider = started.then(() => app.locks.acquire('k'));
    await app.locks.using('k', async () => {
      const fromTimer = await new Promise((resolve) => setTimeout(() => resolve(app.locks.current('k')), 1));
      expect(fromTimer).toBeDefined();
      go();
      await expect(outsider).rejects.toBeInstanceOf(LockNotAcquiredError);
    });
  });

  it('fails a nested acquisition fast when the outer holder lost the lock', async () => {
    app = await createLockApp({ ttl: 2_000, renewInterval: 100 });
    await app.locks.using('k', async (outer) => {
      await redis.del('lock:{k}');
      await new Promise((resolve) => (outer.signal.aborted ? resolve(undefined) : outer.signal.addEventListener('abort', resolve, { once: true })));
      await expect(app.locks.using('k', () => 'never')).rejects.toBeInstanceOf(LockLostError);
    });
  });

  it('takes the lock anew in Redis when the outer holder released it early', async () => {
    app = await createLockApp();
    await app.locks.using('k', async (outer) => {
      await outer.release();
      const again = await app.locks.acquire('k');
      expect(again.fencingToken).toBe(outer.fencingToken + 1);
      await again.release();
    });
  });
});

describe('re-entering after an event-loop stall', () => {
  let app: LockApp;
  afterEach(() => app?.close());

  it('refuses to re-enter a lock whose lease ran out locally before the sweeper could run', async () => {
    app = await createLockApp({ ttl: 300, renewInterval: 100 });
    const inner = await app.locks
      .using('k', async () => {
        const stallUntil = performance.now() + 500;
        while (performance.now() < stallUntil); // the event loop is stuck: no renewal, no sweep
        return app.locks.acquire('k').catch((e: unknown) => e);
      })
      .catch((e: unknown) => e);
    expect(inner).toBeInstanceOf(LockLostError);
    expect(inner).toMatchObject({ reason: 'expired' });
  });
});

describe('re-entering across lock kinds', () => {
  let app: LockApp;
  let other: LockApp;
  afterEach(async () => {
    await app?.close();
    await other?.close();
  });

  it('re-enters only the same kind: a mutex inside a semaphore chain is a lock of its own', async () => {
    app = await createLockApp({ waitTimeout: 300 });
    other = await createLockApp({ waitTimeout: 0 });
    await app.locks.using(
      'kinds',
      async (permit) => {
        const mutex = await app.locks.acquire('kinds');
        expect(mutex).not.toBe(permit);
        // Really held in Redis, so another instance is kept out of the mutex.
        expect(await other.locks.tryAcquire('kinds')).toBeNull();
        await mutex.release();
        const nested = await app.locks.acquire('kinds', { limit: 3 });
        expect(nested.fencingToken).toBe(permit.fencingToken);
        await nested.release();
        await expect(app.locks.acquire('kinds', { limit: 3, permits: 2 })).rejects.toThrow(/cannot share the outer permits/);
      },
      { limit: 3 },
    );
  });
});
