/**
 * Review of d4beb2c (bounded release) against the testing module: on the in-memory store and
 * its manual clock, a held lock now stays on the deadline sweeper (a manual-clock timer) while
 * its release is in flight, and a lost lock's release is tracked again for one ttl. A test
 * that moves the clock while a release is in flight, or releases a lock lost inside using(),
 * must see the release confirmed: no spurious "did not answer", no `lost`, nothing hanging.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, type LockEvent } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';

describe('the bounded release on the in-memory store with a manual clock', () => {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });

  async function open(store: InMemoryLocks): Promise<{ locks: LockService; events: LockEvent[] }> {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: store, ttl: '30s' })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    opened.push(moduleRef);
    const locks = moduleRef.get(LockService);
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    return { locks, events };
  }

  it('a release in flight while the test moves the clock past the lease is confirmed', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const { locks, events } = await open(store);
    const lock = await locks.acquire('manual:release');
    const outcome = lock.release().then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await store.manualClock.advance('2m');
    expect(await outcome).toBe('resolved');
    expect(events.map((event) => event.type)).toEqual(['acquired', 'released']);
    expect(events[1]).not.toHaveProperty('unconfirmed', true);
  });

  it('the release of a lock lost inside using() (the clock moved past its lease) settles at once', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const { locks, events } = await open(store);
    const result = await locks.using('manual:lost', async (lock) => {
      await store.manualClock.advance('31s');
      return lock.signal.aborted ? 'lost' : 'held';
    }, { autoRenew: false });
    expect(result).toBe('lost');
    expect(events.map((event) => event.type)).toEqual(['acquired', 'lost']);
    // The next caller gets the key at once.
    const next = await locks.tryAcquire('manual:lost');
    expect(next).not.toBeNull();
    await next!.release();
    // Moving on a full lease fires nothing more (no second loss, no late release failure).
    await store.manualClock.advance('1m');
    expect(events.map((event) => event.type)).toEqual(['acquired', 'lost', 'acquired', 'released']);
  });
});
