import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';

async function app(locks: InMemoryLocks) {
  const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks, fairness: 'barging' })] }).compile();
  await moduleRef.init();
  return { locks: moduleRef.get(LockService), close: () => moduleRef.close() };
}

/**
 * Found by review (rev-a): on the testing store's manual clock (docs/testing.md), a barging
 * process that re-takes a hot key at once parks it; while a barging waiter of another module
 * contends, a streak ends after 64 parks and the process "steps aside" for 2 ms
 * (lock-parking.ts, `PARK_STEP_ASIDE_MS`) on the engine's clock. On the manual clock that timer
 * only fires on `advance()`: the parking module's next `acquire()` of the key then never
 * completes (nor does a `tryAcquire()`, which should never wait), even once the contender is
 * done and the key is free, although the same calls on
 * Redis (or the system clock) finish after 2 ms. A unit test of a hot barging path hangs.
 */
describe('a greedy barging loop on the manual clock, with a contender', () => {
  it('answers tryAcquire() and keeps acquiring the free key without the clock being advanced', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const greedy = await app(store);
    const contender = await app(store);
    let turns = 0;
    const loop = (async () => {
      for (let i = 0; i < 200; i++) {
        const lock = await greedy.locks.acquire('hot', { waitTimeout: '60s' });
        turns++;
        await lock.release();
      }
    })();
    let contenderTurns = 0;
    const other = (async () => {
      for (let i = 0; i < 3; i++) {
        const lock = await contender.locks.acquire('hot', { waitTimeout: '60s' });
        contenderTurns++;
        await lock.release();
      }
    })();
    await expect.poll(() => contenderTurns, { timeout: 10_000 }).toBe(3);
    await other;
    // The contender is done and the key is free: nothing should hold the greedy loop up.
    await expect.poll(async () => (await greedy.locks.inspect('hot')).held, { timeout: 5_000 }).toBe(false);
    // A tryAcquire() of the free key makes one attempt and never waits.
    let tried: unknown = 'pending';
    const attempt = greedy.locks.tryAcquire('hot').then(
      async (lock) => {
        tried = lock === null ? 'busy' : 'acquired';
        await lock?.release();
      },
      (error: Error) => (tried = error.name),
    );
    try {
      await expect.poll(() => tried, { timeout: 10_000, interval: 50 }).toBe('acquired');
      // Nothing else runs on the key: the loop's remaining turns need no time to pass. (A generous
      // poll, not a bound: on the system clock or on Redis they end within milliseconds.)
      await expect.poll(() => turns, { timeout: 15_000, interval: 50 }).toBe(200);
    } finally {
      // What the stuck caller waits for: the 2 ms step-aside timer, on the manual clock.
      await store.manualClock.advance('2ms');
      await attempt;
      await loop;
    }
    await greedy.close();
    await contender.close();
  }, 30_000);

});
