import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, WithoutOverlapping, type Lock, type LockSkippedEvent } from '../../lib/index.js';
import { JobLockOrchestrator } from '../../lib/scheduling/job-lock.orchestrator.js';
import { blockEventLoop, leaseDeadline } from '../support/mechanism.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// Found by review (forty-fifth session). LockSkippedEvent (lib/interfaces/lock-event.interface.ts):
// "`key` and `name` are those of the lock that decided it". A call of a job with both decorators
// is skipped as `lease-expired` when a stall outlived either lease before the run could start;
// JobLockOrchestrator.skipped() named the run lock whichever had run out. The owner lease, kept
// between calls and renewed every third of its ttl, has less left than the run lock the call has
// just taken: a stall while the run lock's grant is read (here an events$ subscriber that blocks
// the event loop on it) outlives the lease and not the run lock, and the skip said the run lock
// "Job.run", which was live and given back, not "Job.run:owner", which was lost.
describe('a call of a job with both decorators whose owner lease ran out as it took its run lock', () => {
  const redis = useRedis();

  it('is skipped as lease-expired naming the owner lease', async () => {
    let runs = 0;
    @Injectable()
    class StalledJob {
      @OnOneInstance({ ttl: '3s' })
      @WithoutOverlapping()
      async run(): Promise<void> {
        runs++;
      }
    }
    const app = await startJobApp([StalledJob]);
    const locks = app.get<LockService>(LockService);
    const job = app.get(StalledJob);
    await job.run();
    expect(runs).toBe(1);
    const orchestrator = app.get(JobLockOrchestrator) as unknown as { owners: Map<string, Lock> };
    const owner = orchestrator.owners.get('StalledJob.run:owner')!;

    const skips: LockSkippedEvent[] = [];
    const lost: string[] = [];
    let armed: { calledAt: number } | undefined;
    let stalled = false;
    locks.events$.subscribe((event) => {
      if (event.type === 'skipped' && stalled) skips.push(event);
      if (event.type === 'lost') lost.push(event.key);
      if (event.type !== 'acquired' || event.key !== 'StalledJob.run' || armed === undefined) return;
      // The stall: from the run lock's grant past the owner lease's deadline, well within the
      // run lock's (taken after the call began, on a ttl of its own), before the lease's next
      // renewal is sent (at two thirds of its ttl left), whose answer would move that deadline.
      // A loaded machine that came too near either makes the call run, and it is made again.
      const ownerLeft = leaseDeadline(owner) - performance.now();
      const runLeft = 3_000 - (performance.now() - armed.calledAt);
      armed = undefined;
      if (ownerLeft < 2_100 || ownerLeft + 100 > runLeft - 300) return;
      stalled = true;
      blockEventLoop(ownerLeft + 100);
    });
    let runsBefore = runs;
    for (let attempt = 0; attempt < 5 && !stalled; attempt++) {
      // Between two renewals, the lease has a good deal less left than a lock just taken.
      await expect.poll(() => Math.abs(leaseDeadline(owner) - performance.now() - 2_300) < 150, { timeout: 10_000, interval: 10 }).toBe(true);
      runsBefore = runs;
      armed = { calledAt: performance.now() };
      await job.run();
    }
    expect(stalled).toBe(true);
    expect(runs).toBe(runsBefore);
    // The mechanism: the owner lease ran out in the stall, the run lock did not.
    expect(owner.signal.aborted).toBe(true);
    expect(lost).toEqual(['StalledJob.run:owner']);
    expect(skips.map(({ reason, key, name }) => ({ reason, key, name }))).toEqual([
      // Fails: key and name "StalledJob.run", the run lock, live when the call gave it back.
      { reason: 'lease-expired', key: 'StalledJob.run:owner', name: 'StalledJob.run:owner' },
    ]);
    expect(app.logs.has('debug', 'its lease "StalledJob.run:owner" ran out')).toBe(true);
    expect(await redis.exists('lock:{StalledJob.run}')).toBe(0);
  }, 30_000);
});
