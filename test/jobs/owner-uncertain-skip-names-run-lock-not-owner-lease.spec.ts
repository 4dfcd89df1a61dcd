import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, type LockSkippedEvent } from '../../lib/index.js';
import { JobLockOrchestrator } from '../../lib/scheduling/job-lock.orchestrator.js';
import { blockEventLoop, leaseDeadline } from '../support/mechanism.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// docs/jobs-and-leaders.md, "Skipped calls": `owner-uncertain` is about the @OnOneInstance
// lease `<key>:owner` ("its claim took the owner lease over ... or the lease it holds has less
// than a third of its ttl left"). JobLockOrchestrator.skipped() names the lease only for
// `other-owner`; for `owner-uncertain` the event's key and name, and the debug line ("its claim
// of the lease "<key>" came back late"), give the run lock's key instead: on a job with
// @OnOneInstance() alone that key is no lock at all, and inspect() of it shows nothing.
describe('an @OnOneInstance() call skipped as owner-uncertain', () => {
  const redis = useRedis();

  it('names the owner lease in its skipped event and debug line', async () => {
    let runs = 0;
    @Injectable()
    class UncertainJob {
      @OnOneInstance({ ttl: '3s' })
      async run(): Promise<void> {
        runs++;
      }
    }
    const app = await startJobApp([UncertainJob]);
    const skips: LockSkippedEvent[] = [];
    const locks = app.get<LockService>(LockService);
    locks.events$.subscribe((event) => event.type === 'skipped' && skips.push(event));
    const job = app.get(UncertainJob);
    await job.run();
    expect(runs).toBe(1);
    expect(await redis.exists('lock:{UncertainJob.run:owner}')).toBe(1);

    // The watchdog falls behind (a blocked event loop): the lease it holds has less than a third
    // of its ttl left, but has not run out.
    const orchestrator = app.get(JobLockOrchestrator) as unknown as { owners: Map<string, unknown> };
    const held = orchestrator.owners.get('UncertainJob.run:owner') as never;
    const blockFor = leaseDeadline(held) - performance.now() - 600;
    blockEventLoop(blockFor);
    await job.run();
    expect(runs).toBe(1);

    expect(skips.map(({ reason, key, name, where }) => ({ reason, key, name, where }))).toEqual([
      // Fails: key "UncertainJob.run" and name "UncertainJob.run", a lock this job never takes.
      { reason: 'owner-uncertain', key: 'UncertainJob.run:owner', name: 'UncertainJob.run:owner', where: 'UncertainJob.run' },
    ]);
    expect(await redis.exists('lock:{UncertainJob.run}')).toBe(0);
    expect(app.logs.has('debug', 'its claim of the lease "UncertainJob.run:owner" came back late')).toBe(true);
  }, 30_000);
});
