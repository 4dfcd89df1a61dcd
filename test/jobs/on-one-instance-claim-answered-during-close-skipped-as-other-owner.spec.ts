import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, WithoutOverlapping, type LockSkippedEvent } from '../../lib/index.js';
import { JobLockOrchestrator } from '../../lib/scheduling/job-lock.orchestrator.js';
import { blockRedis } from '../support/block-redis.js';
import { useOwnRedis } from '../support/redis.js';
import { closeNow, startJobApp } from './support.js';

// docs/jobs-and-leaders.md, "Skipped calls": `other-owner` means "another instance owns the
// @OnOneInstance() lease"; `shutting-down` "the application is closing". A tick whose claim of the
// owner lease is on its way when app.close() begins, and whose reply comes back while the
// application closes (Redis slow for a moment; a provider draining in beforeApplicationShutdown,
// the usual place, keeps LockService open meanwhile), is skipped, rightly, but as `other-owner`:
// JobLockOrchestrator.claim() sees `closing`, gives the lease back and returns null, which
// ownerLease()/takeLocks() read as "another instance owns it". Nobody owns it; the event, the
// metric and the debug line ("another instance owns the lease") say otherwise, and an alert on
// "other-owner on every instance, no run anywhere" (the docs' advice) fires during a deploy.
describe('an @OnOneInstance() call whose owner-lease claim is answered while the application closes', () => {
  const { url, redis } = useOwnRedis();

  // Found by the review of the fix: with both job decorators, the skip named the run lock
  // ("NightlyJob.run"), which the call never asked for, not the lease it is about.
  it.each([
    ['@OnOneInstance()', false],
    ['@OnOneInstance() @WithoutOverlapping()', true],
  ] as const)('%s: is skipped as shutting-down, not other-owner, naming the owner lease', { timeout: 30_000 }, async (_decorators, withRunLock) => {
    let callSettled: Promise<unknown> = Promise.resolve();
    let closingWhenDrainBegan: boolean | undefined;
    let orchestrator: JobLockOrchestrator | undefined;
    @Injectable()
    class Drain implements BeforeApplicationShutdown {
      async beforeApplicationShutdown(): Promise<void> {
        closingWhenDrainBegan = (orchestrator as unknown as { closing: boolean }).closing;
        await callSettled;
      }
    }
    @Injectable()
    class OwnedJob {
      runs = 0;
      @OnOneInstance({ ttl: '10s' })
      async run(): Promise<string> {
        this.runs++;
        return 'ran';
      }
    }
    @Injectable()
    class BothJob {
      runs = 0;
      @OnOneInstance({ ttl: '10s' })
      @WithoutOverlapping()
      async run(): Promise<string> {
        this.runs++;
        return 'ran';
      }
    }
    const NightlyJob = withRunLock ? BothJob : OwnedJob;
    const job = withRunLock ? 'BothJob.run' : 'OwnedJob.run';
    const app = await startJobApp([NightlyJob, Drain], { redis: url() });
    orchestrator = app.get(JobLockOrchestrator);
    const locks = app.get<LockService>(LockService);
    const skips: LockSkippedEvent[] = [];
    locks.events$.subscribe((event) => event.type === 'skipped' && skips.push(event));
    await locks.isLocked('warm-up');

    const { ended } = await blockRedis(url(), 600);
    const call = app.get(NightlyJob).run();
    callSettled = call.catch(() => undefined);
    await closeNow(app);
    await ended;

    expect(await call).toBeUndefined();
    expect(app.get(NightlyJob).runs).toBe(0);
    // The mechanism: the orchestrator was already closing when the claim came back.
    expect(closingWhenDrainBegan).toBe(true);
    expect(await redis().exists(`lock:{${job}:owner}`, `lock:{${job}}`)).toBe(0);
    // It was [{ reason: 'other-owner', ... }]; with both decorators, key and name 'BothJob.run'.
    expect(skips.map(({ reason, key, name }) => ({ reason, key, name }))).toEqual([{ reason: 'shutting-down', key: `${job}:owner`, name: `${job}:owner` }]);
    expect(app.logs.has('debug', 'another instance owns the lease')).toBe(false);
  });
});
