import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { settledTimeouts } from '../support/mechanism.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// 78fa5c1 bounds onLeadershipLost in stepDown() (onLeadershipAcquired threw) by the term's ttl
// with a plain settleWithin on a ref'd timer, and -- unlike lost()'s waits (lostWait) -- stop()
// cannot cut it short. When app.close() comes during that wait, close returns after
// shutdownTimeout but the ttl timer stays armed: the process is kept alive for up to a ttl after
// app.close() (the very thing the same commit fixed for lost(): "its wait keeping the process
// alive"), and when it fires the runner releases a lease after shutdown.

describe('a leader stepping down (onLeadershipAcquired threw) whose onLeadershipLost hangs, then app.close()', () => {
  useRedis();

  async function scenario(lostHangs: boolean): Promise<{ before: number; after: number; lostCalls: number }> {
    let lostCalls = 0;
    @Injectable()
    @LeaderElection(`step-down-then-close-${lostHangs}`, { ttl: '60s' })
    class FailingLeader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(): void {
        throw new Error('cannot start');
      }
      onLeadershipLost(): Promise<void> | void {
        lostCalls++;
        if (lostHangs) return new Promise<void>(() => undefined);
      }
    }
    const before = await settledTimeouts();
    const app = await startJobApp([FailingLeader], { shutdownTimeout: 300 });
    await expect.poll(() => lostCalls, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(app.get(LeadershipService).isLeader(`step-down-then-close-${lostHangs}`)).toBe(false);
    await closeNow(app);
    const after = await settledTimeouts();
    return { before, after, lostCalls };
  }

  it('control: with an onLeadershipLost that returns, app.close() leaves no timer behind', async () => {
    const { before, after } = await scenario(false);
    expect(after).toBeLessThanOrEqual(before);
  }, 60_000);

  it('leaves no timer behind after app.close() (the process exits on its own)', async () => {
    const { before, after, lostCalls } = await scenario(true);
    expect(lostCalls).toBe(1);
    // Fails: one more Timeout than before the app started -- stepDown's 60 s ttl wait.
    expect(after).toBeLessThanOrEqual(before);
  }, 60_000);
});
