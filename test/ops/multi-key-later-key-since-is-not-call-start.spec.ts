/**
 * Defect: `inspect()` reports, for the later keys of a multi-key lock, a `holder.since` that is
 * not when the holder's `acquire()` call started but when the call got round to that key (after
 * it waited for the earlier ones). Two keys taken by one call, held by one holder since one
 * moment, read as taken at two different times, apart by however long the first key was
 * waited for: an operator who reads `since` to find a holder that hangs, or sorts holders by
 * it, is misled by exactly the waits that made them look.
 *
 * Promise: docs/observability.md "`since` is when the holder's `acquire()` call started (a
 * holder that waited got the lock later)"; lib/interfaces/lock-inspection.interface.ts
 * `LockHolder.since` "When the holder's `acquire()` call started".
 *
 * Code at fault: the owner token (and its `since`, lib/core/engine/holder.ts
 * `HolderRecorder.suffix`, `Date.now()` when the token is made) is made per key when that key's
 * `Acquisition` starts (lib/core/engine/acquisition.ts constructor, `host.newToken`), which for a
 * multi-key call (lib/core/multi-key/acquire-all.ts) is after the earlier keys were taken.
 */
import { describe, expect, it } from 'vitest';
import { nextEvent, sleep, useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('inspect() of the keys of one multi-key lock', () => {
  useRedis();
  const app = useLockApps();

  it('reports one since for every key, when the acquire() call started', async () => {
    const holder = await app();
    const caller = await app();
    const first = await holder.locks.acquire('since:a');
    const waiting = nextEvent(caller.locks.events$, 'waiting');
    const call = caller.locks.acquire(['since:a', 'since:b'], { label: 'Transfer.run', waitTimeout: 10_000 });
    await waiting;
    // The call waits on its first key for a while before it gets to the second.
    await sleep(200);
    await first.release();
    const lock = await call;
    const [a, b] = [await caller.locks.inspect('since:a'), await caller.locks.inspect('since:b')];
    expect(a.holder?.label).toBe('Transfer.run');
    expect(b.holder?.label).toBe('Transfer.run');
    // Fails: b's since is some 200 ms later than a's (when the call reached b).
    expect(b.holder?.since).toBe(a.holder?.since);
    await lock.release();
  });
});
