/**
 * Found by review (twenty-ninth session): a test that installs fake timers (`vi.useFakeTimers()`, or Jest's
 * `jest.useFakeTimers()`, whose defaults fake `setImmediate` too) and then calls code that locks.
 * On Redis the call completes: its replies come over a socket, which fake timers do not stop.
 * On the in-memory store, which the docs present as the same semantics without Redis, every
 * store call waits for a `setImmediate` (`settled()` in memory-data.ts; `ManualClock.advance()`
 * settles the same way), so the call never completes unless the test drives the fake timers:
 * the unit test hangs until its timeout, with nothing saying why.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs, createLockApp, type LockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/** Taken before any test fakes the timers: how long the test waits before it calls the call stuck. */
const realSetTimeout = setTimeout;
const STUCK_AFTER_MS = 3_000;

function settles<T>(call: Promise<T>): Promise<T | 'still pending'> {
  return Promise.race([call, new Promise<'still pending'>((resolve) => realSetTimeout(() => resolve('still pending'), STUCK_AFTER_MS))]);
}

describe('code that locks, called while the test has faked the timers', () => {
  useRedis();
  const opened: TestingModule[] = [];
  const apps: LockApp[] = [];
  afterEach(async () => {
    // Lets a stuck call go on (the faked turns it waits for), so that the modules close at once.
    for (let i = 0; i < 50 && vi.isFakeTimers() && vi.getTimerCount() > 0; i++) await vi.runOnlyPendingTimersAsync();
    vi.useRealTimers();
    await Promise.all([...opened.splice(0).map((moduleRef) => moduleRef.close()), ...apps.splice(0).map((app) => app.close())]);
  });

  async function inMemory(locks: InMemoryLocks): Promise<LockService> {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    opened.push(moduleRef);
    return moduleRef.get(LockService);
  }

  it('completes on Redis (the control)', async () => {
    const app = await createLockApp();
    apps.push(app);
    vi.useFakeTimers();
    expect(await settles(app.locks.using('fake-timers:redis', async () => 'done'))).toBe('done');
  });

  // The same turn on Redis: a barging lock released is parked until the next setImmediate
  // (lock-parking.ts), which fake timers never ran; its key stayed held from every other process.
  it('frees a barging lock parked at its release on Redis', async () => {
    const app = await createLockApp();
    const rival = await createLockApp();
    apps.push(app, rival);
    vi.useFakeTimers();
    // Greedy: each call asks again as the last one's release came back, so that the releases park.
    for (let i = 0; i < 3; i++) expect(await settles(app.locks.using('fake-timers:parked', async () => 'done', { fairness: 'barging' }))).toBe('done');
    let taken = null;
    for (let i = 0; i < 60 && taken === null; i++) {
      taken = await rival.locks.tryAcquire('fake-timers:parked');
      if (taken === null) await new Promise((resolve) => realSetTimeout(resolve, 50));
    }
    expect(taken?.held).toBe(true);
    await settles(taken!.release());
  });

  it('completes on the in-memory store (system clock)', async () => {
    const locks = await inMemory(new InMemoryLocks());
    vi.useFakeTimers();
    expect(await settles(locks.using('fake-timers:memory', async () => 'done'))).toBe('done');
  });

  it('completes on the in-memory store with a manual clock', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const locks = await inMemory(store);
    vi.useFakeTimers();
    expect(await settles(locks.using('fake-timers:manual', async () => 'done'))).toBe('done');
  });
});
