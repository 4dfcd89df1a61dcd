/**
 * Found by review (twenty-ninth session): `app.close()` (`moduleRef.close()`) with a lock held, while the test's
 * fake timers are installed (`vi.useFakeTimers()`, `jest.useFakeTimers()`: an `afterEach` that
 * closes the module before it restores real timers). The give-back completes (a socket reply on
 * Redis), but the close then waits a turn of the event loop with the global `setImmediate`
 * (LockManager.giveBackAll, lib/core/engine/lock-manager.ts:658), which fake timers hold back:
 * the close never ends and the test times out in its teardown. A module that held nothing closes.
 */
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs, createLockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/** Taken before any test fakes the timers: how long the test waits before it calls the close stuck. */
const realSetTimeout = setTimeout;
const STUCK_AFTER_MS = 3_000;

function settles(close: Promise<void>): Promise<'closed' | 'still pending'> {
  return Promise.race([close.then(() => 'closed' as const), new Promise<'still pending'>((resolve) => realSetTimeout(() => resolve('still pending'), STUCK_AFTER_MS))]);
}

describe('closing the application with a lock held, while the test has faked the timers', () => {
  useRedis();
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends on Redis', async () => {
    const app = await createLockApp();
    await app.locks.acquire('fake-timers-close:redis');
    vi.useFakeTimers();
    const close = app.close();
    const outcome = await settles(close);
    // Lets a stuck close end (the faked turn it waits for), so that the module does not stay open.
    await vi.runOnlyPendingTimersAsync();
    vi.useRealTimers();
    await close;
    expect(outcome).toBe('closed');
  });

  it('ends on the in-memory store', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    await moduleRef.get(LockService).acquire('fake-timers-close:memory');
    vi.useFakeTimers();
    const close = moduleRef.close();
    const outcome = await settles(close);
    // Lets a stuck close end (the faked turn it waits for), so that the module does not stay open.
    await vi.runOnlyPendingTimersAsync();
    vi.useRealTimers();
    await close;
    expect(outcome).toBe('closed');
  });

  it('ends with nothing held (the control)', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    vi.useFakeTimers();
    expect(await settles(moduleRef.close())).toBe('closed');
  });
});
