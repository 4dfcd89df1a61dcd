/**
 * Found by review: the in-memory store started a new fencing counter at its clock's time, which on
 * the manual clock is 0 when the test begins, and tokens began at 1 again after `locks.clear()`.
 * A fenced resource that outlives the store (a test database kept between runs, the sample app
 * started again with LOCK_STORE=memory) keeps the highest token it saw and refused every write
 * after that. A new counter starts at the wall clock (which a manual clock does not move), and
 * above every token the store handed out.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';

describe('the in-memory store on a manual clock: a new fencing counter', () => {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });

  async function open(store: InMemoryLocks): Promise<LockService> {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: store, ttl: '30s' })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    opened.push(moduleRef);
    return moduleRef.get(LockService);
  }

  it('starts at the wall clock, and after clear() goes on above the tokens handed out before', async () => {
    const before = Date.now();
    const store = new InMemoryLocks({ clock: 'manual' });
    const locks = await open(store);
    const first = await locks.acquire('manual:fence');
    await first.release();
    // Before: 1 (the manual clock starts at 0).
    expect(first.fencingToken).toBeGreaterThanOrEqual(before);
    const second = await locks.acquire('manual:fence');
    await second.release();
    expect(second.fencingToken).toBe(first.fencingToken + 1);
    // A store emptied (as between two tests against one database), the clock standing still.
    store.clear();
    const next = await locks.acquire('manual:fence');
    await next.release();
    expect(next.fencingToken).toBeGreaterThan(second.fencingToken);
  });

  // Found by review of the first version of this fix, which moved the counters' start with
  // advance(): a test that advanced a day handed a day-ahead token to a resource that the next
  // run (on any store, or on Redis' TIME) then could not write to for a day.
  it('does not run ahead of the wall clock when the manual clock is advanced', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const locks = await open(store);
    await store.manualClock.advance('1d');
    const lock = await locks.acquire('manual:advanced');
    await lock.release();
    expect(lock.fencingToken).toBeLessThan(Date.now() + 60_000);
  });
});
