/**
 * Defect (in today's fix 256d860, "the holder's since at the call's start"): on the testing
 * store's manual clock, the later keys of a multi-key lock record a holder `since` that is shifted
 * back by however far the test moved the manual clock while the call waited. The first key's
 * token takes `Date.now()` (wall clock) when it is made; a later key's takes
 * `Date.now() - (clock.now() - calledAt)` (lib/core/engine/lock-manager.ts newToken), mixing the
 * engine's clock (the manual one, advanced 30 s here in no real time) with the wall clock. One
 * holder then reads as taken at two moments 30 s apart, the later key 30 s *before* the call was
 * even made.
 *
 * Promise: docs/observability.md "`since` is when the holder's `acquire()` call started";
 * lib/interfaces/lock-inspection.interface.ts `LockHolder.since`; CHANGELOG (fix 256d860): "one
 * holder read as taken at two times" is what was fixed; docs/testing.md: the store "keeps the
 * protocol ... `inspect()`", a difference with Redis being a bug.
 */
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, type LockEvent } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function app(locks: InMemoryLocks): Promise<LockService> {
  const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks })] })
    .setLogger(new CapturedLogs())
    .compile();
  await moduleRef.init();
  closers.push(() => moduleRef.close());
  return moduleRef.get(LockService);
}

describe('inspect() of a multi-key lock taken on the manual clock after a wait', () => {
  it('reports one since for every key: when the acquire() call started', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const holder = await app(store);
    const caller = await app(store);
    const first = await holder.acquire('since:a', { ttl: '60s' });
    const events: LockEvent[] = [];
    caller.events$.subscribe((event) => events.push(event));

    const calledAt = Date.now();
    const call = caller.acquire(['since:a', 'since:b'], { label: 'Transfer.run', waitTimeout: '10m' });
    await expect.poll(() => events.some((event) => event.type === 'waiting' && event.key === 'since:a'), { timeout: 10_000 }).toBe(true);
    // The test lets 30 s of lock time pass while the call waits on its first key (no real time).
    await store.manualClock.advance('30s');
    await first.release();
    let lock: Awaited<typeof call> | undefined;
    void call.then((taken) => (lock = taken));
    await expect.poll(async () => {
      if (lock === undefined) await store.manualClock.advance(0);
      return lock !== undefined;
    }, { timeout: 10_000 }).toBe(true);

    const [a, b] = [await caller.inspect('since:a'), await caller.inspect('since:b')];
    expect([a.holder?.label, b.holder?.label]).toEqual(['Transfer.run', 'Transfer.run']);
    // The first key's since is the call's start on the wall clock.
    expect(a.holder!.since).toBeGreaterThanOrEqual(calledAt);
    // Fails: b's since is some 30 000 ms before a's (and before the call was made): the manual
    // clock's advance was subtracted from the wall clock.
    expect({ b: b.holder!.since, before: b.holder!.since < calledAt }).toEqual({ b: a.holder!.since, before: false });
    await lock!.release();
  });
});
