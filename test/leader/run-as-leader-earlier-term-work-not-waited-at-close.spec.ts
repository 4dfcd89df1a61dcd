import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService } from '../../lib/index.js';
import { leaderThatStepsDown } from './step-down-leader.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

/**
 * Found by review (thirtieth session, left over): `app.close()` waited only for the work
 * `runAsLeader()` runs in the CURRENT term. Work of an earlier term, whose lease was lost (told
 * through its term's signal, and still winding down), was not waited for: once this instance led
 * again, the close gave the new term's lease back under it, and another instance could lead (and
 * start the same work) beside it. On main:
 *   [..., 'closing', 'gate-opened', 'work-ended, lease gone', 'closed']
 */
describe('runAsLeader() work of an earlier term, still winding down at app.close()', () => {
  const redis = useRedis();

  it('is waited for (within shutdownTimeout) before the new term is given back', async () => {
    const key = 'earlier-term-work-at-close';
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    @Injectable()
    @LeaderElection(key, { ttl: '3s' })
    class ReportsLeader {}
    const app = await startJobApp([ReportsLeader], { shutdownTimeout: 20_000 });
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader(key), { timeout: 5_000 }).toBe(true);
    const first = leadership.leaderLock(key)!;
    const work = leadership.runAsLeader(key, async (term) => {
      order.push('work-started');
      await new Promise((resolve) => term.signal.addEventListener('abort', resolve, { once: true }));
      order.push(`work-told (${(term.signal.reason as { reason?: string }).reason})`);
      await gate; // winding down: a last batch written, a cursor saved
      order.push(`work-ended, lease ${(await redis.exists(`lock:{${key}}`)) === 1 ? 'held' : 'gone'}`);
    });
    await expect.poll(() => order, { timeout: 5_000 }).toEqual(['work-started']);

    // The lease is lost (gone from Redis, heard at the term's next renewal): the work is told.
    await redis.del(`lock:{${key}}`);
    await first.extend().catch(() => undefined);
    await expect.poll(() => order, { timeout: 5_000 }).toEqual(['work-started', 'work-told (refused)']);
    // This instance leads again (a new term) while the first term's work still winds down.
    await expect.poll(() => leadership.leaderLock(key) !== undefined && leadership.leaderLock(key) !== first, { timeout: 10_000 }).toBe(true);
    order.push('led-again');

    order.push('closing');
    const closing = closeNow(app).then(() => order.push('closed'));
    // Let the shutdown go on as far as it goes without the work, then let the work end.
    await new Promise((resolve) => setTimeout(resolve, 500));
    order.push('gate-opened');
    openGate();
    await closing;
    await work;
    expect(order).toEqual(['work-started', 'work-told (refused)', 'led-again', 'closing', 'gate-opened', 'work-ended, lease held', 'closed']);
    expect(await redis.exists(`lock:{${key}}`)).toBe(0);
  }, 60_000);

  it('is waited for (bounded by the lease) before a step-down of the new term gives its lease back', async () => {
    const key = 'earlier-term-work-step-down';
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    // Its onLeadershipAcquired waits for fail() (the first term's hook is cut by the loss, after
    // its ttl), then throws: the second term steps down.
    const { Leader, fail } = leaderThatStepsDown(key);
    const app = await startJobApp([Leader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader(key), { timeout: 5_000 }).toBe(true);
    const first = leadership.leaderLock(key)!;
    const work = leadership.runAsLeader(key, async (term) => {
      await new Promise((resolve) => term.signal.addEventListener('abort', resolve, { once: true }));
      order.push(`work-told (${(term.signal.reason as { reason?: string }).reason})`);
      await gate;
      order.push(`work-ended, lease ${(await redis.exists(`lock:{${key}}`)) === 1 ? 'held' : 'gone'}`);
    });
    await redis.del(`lock:{${key}}`);
    await first.extend().catch(() => undefined);
    await expect.poll(() => order, { timeout: 5_000 }).toEqual(['work-told (refused)']);
    await expect.poll(() => leadership.leaderLock(key) !== undefined && leadership.leaderLock(key) !== first, { timeout: 15_000 }).toBe(true);
    order.push('led-again, stepping down');
    fail();
    await expect.poll(() => leadership.isLeader(key), { timeout: 5_000 }).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    order.push('gate-opened');
    openGate();
    await work;
    expect(order).toEqual(['work-told (refused)', 'led-again, stepping down', 'gate-opened', 'work-ended, lease held']);
  }, 60_000);
});
