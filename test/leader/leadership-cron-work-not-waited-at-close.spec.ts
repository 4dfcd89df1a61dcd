import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockService, RedisLockError, type Lock } from '../../lib/index.js';
import { leaderThatStepsDown } from './step-down-leader.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

/**
 * Found by review (twenty-ninth session, left over): the cron pattern of docs/jobs-and-leaders.md
 * ("Am I the leader?": `leaderLock(key)`, then work on `term.signal`) ran work the module never
 * saw. At `app.close()` the term's signal aborted, but the module waited only for the election's
 * hooks, then gave the lease back: another instance could lead (and start the same cron work)
 * while this one's was still winding down. On main, with that pattern:
 *   [..., 'work-told', 'closed', 'gate-opened', 'work-ended, lease gone']
 * The pattern is `LeadershipService.runAsLeader(key, work)` now: the module sees the work, and
 * gives the lease back only after it ends (within shutdownTimeout), as for a job run.
 */
describe('work a cron runs as the leader, still winding down at app.close()', () => {
  const redis = useRedis();

  it('holds the leadership until it ends (within shutdownTimeout)', async () => {
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    @Injectable()
    @LeaderElection('cron-work-at-close', { ttl: '4s' })
    class ReportsLeader {}
    @Injectable()
    class Reports {
      constructor(readonly leadership: LeadershipService) {}
      // A @Cron method, called by the test (the tick's timing is not what is tested).
      hourly(): Promise<string | undefined> {
        return this.leadership.runAsLeader('cron-work-at-close', (term) => this.build(term.signal));
      }
      private async build(signal: AbortSignal): Promise<string> {
        order.push('work-started');
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        order.push('work-told');
        await gate; // winding down: a last batch written, a cursor saved
        order.push(`work-ended, lease ${(await redis.exists('lock:{cron-work-at-close}')) === 1 ? 'held' : 'gone'}`);
        return 'built';
      }
    }
    const app = await startJobApp([ReportsLeader, Reports], { shutdownTimeout: 20_000 });
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader('cron-work-at-close'), { timeout: 5_000 }).toBe(true);
    const tick = app.get(Reports).hourly();
    await expect.poll(() => order, { timeout: 5_000 }).toEqual(['work-started']);

    const closing = closeNow(app).then(() => order.push('closed'));
    await expect.poll(() => order.includes('work-told'), { timeout: 5_000 }).toBe(true);
    // Let the shutdown go on as far as it goes without the work, then let the work end.
    await new Promise((resolve) => setTimeout(resolve, 500));
    order.push('gate-opened');
    openGate();
    await closing;
    expect(await tick).toBe('built');
    expect(order).toEqual(['work-started', 'work-told', 'gate-opened', 'work-ended, lease held', 'closed']);
    expect(await redis.exists('lock:{cron-work-at-close}')).toBe(0);
    // Once the application is shutting down, no new work starts.
    expect(await app.get(Reports).hourly()).toBeUndefined();
  }, 60_000);

  it('runs in the term (current() is the term), not on an instance that does not lead, and says what a bad call lacks', async () => {
    @Injectable()
    @LeaderElection('cron-work-in-term', { ttl: '4s' })
    class ReportsLeader {}
    const app = await startJobApp([ReportsLeader]);
    const leadership = app.get(LeadershipService);
    const locks = app.get(LockService);
    await expect.poll(() => leadership.isLeader('cron-work-in-term'), { timeout: 5_000 }).toBe(true);
    const seen = await leadership.runAsLeader('cron-work-in-term', (term: Lock) => locks.current() === term && term === leadership.leaderLock('cron-work-in-term'));
    expect(seen).toBe(true);
    // Its failure is the caller's, and the term goes on.
    await expect(leadership.runAsLeader('cron-work-in-term', () => Promise.reject(new Error('build failed')))).rejects.toThrow('build failed');
    await expect(leadership.runAsLeader('cron-work-in-term', () => { throw new Error('sync'); })).rejects.toThrow('sync');
    expect(leadership.isLeader('cron-work-in-term')).toBe(true);
    // Another instance leads: nothing runs.
    const term = leadership.leaderLock('cron-work-in-term')!;
    await redis.set('lock:{cron-work-in-term}', 'someone-else', 'PX', 60_000);
    await term.extend().catch(() => undefined);
    await expect.poll(() => leadership.isLeader('cron-work-in-term'), { timeout: 5_000 }).toBe(false);
    let ran = false;
    expect(await leadership.runAsLeader('cron-work-in-term', () => (ran = true))).toBeUndefined();
    expect(ran).toBe(false);
    await expect(leadership.runAsLeader('no-such-election', () => 1)).rejects.toThrow(RedisLockError);
    await expect(leadership.runAsLeader('cron-work-in-term', undefined as never)).rejects.toThrow(/give the work as a function/);
    await redis.del('lock:{cron-work-in-term}');
  }, 60_000);

  it('at a step-down (onLeadershipAcquired threw), gives the lease back after the work ends', async () => {
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const { Leader, fail } = leaderThatStepsDown('cron-work-step-down');
    const app = await startJobApp([Leader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader('cron-work-step-down'), { timeout: 5_000 }).toBe(true);
    const work = leadership.runAsLeader('cron-work-step-down', async (term) => {
      await new Promise((resolve) => term.signal.addEventListener('abort', resolve, { once: true }));
      order.push(`work-told (${(term.signal.reason as { reason?: string }).reason})`);
      await gate;
      order.push(`work-ended, lease ${(await redis.exists('lock:{cron-work-step-down}')) === 1 ? 'held' : 'gone'}`);
    });
    fail();
    await expect.poll(() => order, { timeout: 5_000 }).toEqual(['work-told (stepped-down)']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    openGate();
    await work;
    expect(order).toEqual(['work-told (stepped-down)', 'work-ended, lease held']);
  }, 60_000);
});
