import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LockService, WithoutOverlapping, type Lock, type LockEvent, type OnLeadershipAcquired } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// docs/configuration.md, "Shutdown": first, in onModuleDestroy, "running jobs and leaders are told
// to stop (their lock's signal aborts ...) and given up to shutdownTimeout to end"; and
// docs/jobs-and-leaders.md: "On app.close() ... new job calls are skipped (shutting-down)". The
// elections (LockSchedulingExplorer) and the jobs (JobLockOrchestrator) are stopped by two
// providers' onModuleDestroy, and Nest runs them one hierarchy level after the other (the
// explorer depends on the orchestrator): while a leader's hook is given its shutdownTimeout, the
// orchestrator has not been told the application is closing. Its running jobs' signals are not
// aborted, and new job calls start runs, until the leader's hooks end or time out; then the jobs
// get a shutdownTimeout of their own (app.close() takes two).
describe('app.close() with a leader whose hook is slow to stop and a running job', () => {
  const redis = useRedis();

  it('tells the running job at once, and skips new job calls, while the leader winds down', async () => {
    const order: string[] = [];
    let leaderTold = false;
    @Injectable()
    @LeaderElection('slow-leader', { ttl: '60s' })
    class SlowLeader implements OnLeadershipAcquired {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        await new Promise<void>((resolve) => lock.signal.addEventListener('abort', () => resolve(), { once: true }));
        leaderTold = true;
        order.push('leader told');
        await new Promise(() => undefined); // its clean-up never ends: shutdownTimeout bounds it
      }
    }
    let logs = (): { has(level: string, text: string): boolean } => ({ has: () => false });
    let started = false;
    let laterRuns = 0;
    @Injectable()
    class Export {
      constructor(readonly locks: LockService) {}
      @WithoutOverlapping({ ttl: '60s' })
      async run(): Promise<void> {
        started = true;
        const { signal } = this.locks.current()!;
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        // Told before or after the leader's hooks used up their shutdownTimeout?
        order.push(logs().has('warn', 'The hooks of SlowLeader were still running') ? 'job told after the leader timed out' : 'job told');
      }
      @WithoutOverlapping({ ttl: '60s' })
      async later(): Promise<void> {
        laterRuns++;
      }
    }
    const app = await startJobApp([SlowLeader, Export], { shutdownTimeout: 1_500 });
    logs = () => app.logs;
    const skipped: LockEvent[] = [];
    app.get(LockService).events$.subscribe((event) => {
      if (event.type === 'skipped') skipped.push(event);
    });
    await expect.poll(async () => redis.exists('lock:{slow-leader}'), { timeout: 5_000 }).toBe(1);
    const running = app.get(Export).run();
    await expect.poll(() => started).toBe(true);

    const closing = closeNow(app);
    await expect.poll(() => leaderTold, { timeout: 5_000 }).toBe(true);
    // The application is closing: a job call now must not start a run.
    await app.get(Export).later();
    await closing;
    await running;
    // Fails: { laterRuns: 1, skipped: [], order: ['leader told', 'job told after the leader timed out'] }:
    // the call made while closing ran, and the running job was told only after the leader's
    // hooks had used their whole shutdownTimeout.
    expect({ laterRuns, skipped: skipped.map((event) => (event as { reason?: string }).reason), order }).toEqual({
      laterRuns: 0,
      skipped: ['shutting-down'],
      order: ['leader told', 'job told'],
    });
  }, 30_000);
});
