/**
 * Found by review (thirty-ninth session): at app.close(), a job run (or a leader's hook) whose
 * `using()` / `@Locked` call is still waiting for its lock (another holder has it) is not told: the
 * job phase (JobLockOrchestrator.stop) and the leaders' (LeaderElectionRunner.stop) tell the calls
 * running under their locks (LockManager.interruptCallsWithin), but a waiting call has no lock yet,
 * and its wait ends only in LockService's phase, after the job's or leader's phase gave up on it.
 * So the close waited the whole shutdownTimeout, warned that the job "was still running ... its
 * locks are given back while it runs" (the hooks "were still running"), and gave the run lock and
 * owner lease (the leadership) back under the run.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LockNotAcquiredError, LockService, OnOneInstance, WithoutOverlapping, type OnLeadershipAcquired } from '../../lib/index.js';
import { useOwnRedis } from '../support/redis.js';
import { closeNow, startJobApp } from './support.js';

/** What an inner call ended with: its error's class and message. */
function ending(error: unknown): { error: string; message: string } {
  return { error: (error as Error).constructor.name, message: (error as Error).message };
}

const SHUT_DOWN = { error: LockNotAcquiredError.name, message: expect.stringContaining('the application is closing') };

describe('app.close() with a job run or a leader hook whose inner call still waits for its lock', () => {
  const { url } = useOwnRedis();

  it('ends the wait in the job phase: the run ends within it, before its locks are given back', async () => {
    const order: string[] = [];
    @Injectable()
    class Stock {
      waiting = false;
      inner?: { error: string; message: string };
      constructor(readonly locks: LockService) {}
      @OnOneInstance({ ttl: '10s' })
      @WithoutOverlapping()
      async reconcile(): Promise<void> {
        this.waiting = true;
        await this.locks.using('inventory:1', () => order.push('inner ran'), { waitTimeout: '20s' }).catch((error: unknown) => (this.inner = ending(error)));
        order.push('job ended');
      }
    }
    const app = await startJobApp([Stock], { redis: url(), shutdownTimeout: 1_000 });
    const locks = app.get<LockService>(LockService);
    locks.events$.subscribe((event) => {
      if (event.type === 'released' && event.key.startsWith('Stock.reconcile')) order.push(`${event.key} released`);
      // As shutdown's end of a wait is counted (the caller's signal did not abort it).
      if (event.type === 'not-acquired' && event.key === 'inventory:1') order.push(`inner not acquired (${event.outcome})`);
    });
    // Held outside the run: given back only in LockService's own phase.
    await locks.acquire('inventory:1', { ttl: '10s' });
    const job = app.get<Stock>(Stock);
    const run = job.reconcile();
    await expect.poll(() => job.waiting).toBe(true);
    await closeNow(app);
    await run;
    // Failed: 'Stock.reconcile was still running 1000 ms (shutdownTimeout) after its signal aborted
    // for shutdown; its locks are given back while it runs.', and the run ended after its locks went.
    expect({ warned: app.logs.lines.filter((line) => line.message.includes('still running')).map((line) => line.message), inner: job.inner, order }).toEqual({
      warned: [],
      inner: SHUT_DOWN,
      order: ['inner not acquired (error)', 'job ended', 'Stock.reconcile released', 'Stock.reconcile:owner released'],
    });
  }, 15_000);

  it("ends the wait in the leaders' phase: the hook ends within it, before the leadership is given back", async () => {
    const seen = { waiting: false, inner: undefined as { error: string; message: string } | undefined, hookEnded: false };
    @Injectable()
    @LeaderElection('inner-wait-leader', { ttl: '10s' })
    class Feed implements OnLeadershipAcquired {
      constructor(readonly locks: LockService) {}
      async onLeadershipAcquired(): Promise<void> {
        seen.waiting = true;
        await this.locks.using('feed-socket', () => undefined, { waitTimeout: '20s' }).catch((error: unknown) => (seen.inner = ending(error)));
        seen.hookEnded = true;
      }
    }
    const app = await startJobApp([Feed], { redis: url(), shutdownTimeout: 1_000 });
    const locks = app.get<LockService>(LockService);
    let hookEndedAtRelease: boolean | undefined;
    locks.events$.subscribe((event) => {
      if (event.type === 'released' && event.key === 'inner-wait-leader') hookEndedAtRelease = seen.hookEnded;
    });
    // Taken before the election's first try can lead: its hook finds the key held.
    await locks.acquire('feed-socket', { ttl: '10s' });
    await expect.poll(() => seen.waiting, { timeout: 5_000 }).toBe(true);
    await closeNow(app);
    // Failed: 'The hooks of Feed were still running 1000 ms (shutdownTimeout) after its leadership's
    // signal aborted for shutdown; the lease is given back while they run.'
    expect({ warned: app.logs.lines.filter((line) => line.message.includes('still running')).map((line) => line.message), inner: seen.inner, hookEndedAtRelease }).toEqual({
      warned: [],
      inner: SHUT_DOWN,
      hookEndedAtRelease: true,
    });
  }, 15_000);
});
