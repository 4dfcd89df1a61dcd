import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

// docs/jobs-and-leaders.md: "Inside the run, `LockService.current()` is the run's lock", and
// LockManager.current() says of stray code: "A lock its using() or @Locked call has released is
// over for code still running from it (a timer, a promise nobody awaited): current() says so, as
// it does outside any chain." JobLockOrchestrator.inChain() (job-lock.orchestrator.ts:384-387) puts
// the @OnOneInstance lease on the run's call chain under the run lock; the lease is never released
// at the end of a run (it is kept between calls), so code a run left behind (a retry timer, a
// callback) finds current() = the `<key>:owner` lease after its run ended, and after the next run
// started: a signal that does not abort when its run ended, and a fencing token that is the same
// for every run on this instance, so a store fenced with `current().fencingToken` (the pattern in
// the docs) cannot refuse the stale writes of an earlier run while a later one runs. Without
// @OnOneInstance the same stray code finds current() undefined.
describe('code left running by an ended run of an @OnOneInstance() @WithoutOverlapping() job', () => {
  useRedis();

  it('finds no lock in current(), as for @Locked and @WithoutOverlapping() alone', async () => {
    const seen: { run: number; key?: string; fencingToken?: number }[] = [];
    let later!: () => void;
    const fired = new Promise<void>((resolve) => (later = resolve));
    let secondStarted!: () => void;
    const second = new Promise<void>((resolve) => (secondStarted = resolve));
    @Injectable()
    class Reconcile {
      runs = 0;
      constructor(readonly locks: LockService) {}
      @OnOneInstance({ key: 'stray', ttl: '5s' })
      @WithoutOverlapping()
      async run(): Promise<void> {
        const run = ++this.runs;
        const lock = this.locks.current()!;
        seen.push({ run, key: lock.key, fencingToken: lock.fencingToken });
        // A retry left behind by run 1, firing once run 2 is going (its timer set from run 1's
        // code once run 2 has begun, not after a fixed delay that a loaded machine outlasts
        // before run 2 begins).
        if (run === 1) {
          void second.then(() =>
            setTimeout(() => {
              const stray = this.locks.current();
              seen.push({ run, key: stray?.key, fencingToken: stray?.fencingToken });
              later();
            }, 0),
          );
        } else {
          secondStarted();
          await fired;
        }
      }
    }
    const app = await startJobApp([Reconcile]);
    const job = app.get(Reconcile);
    await job.run();
    await job.run();
    expect(seen.map(({ run, key }) => ({ run, key }))).toEqual([
      { run: 1, key: 'stray' },
      { run: 2, key: 'stray' },
      // Fails: { run: 1, key: 'stray:owner' } (the lease, live, its token the same for every run here)
      { run: 1, key: undefined },
    ]);
  });
});
