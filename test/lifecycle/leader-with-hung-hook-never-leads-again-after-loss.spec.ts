import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

describe('a leader whose onLeadershipAcquired never returns, then loses its lease', () => {
  const redis = useRedis();

  it('tries for the leadership again and is told of the loss', async () => {
    const terms: number[] = [];
    let lostCalls = 0;
    @Injectable()
    @LeaderElection('hung-hook', { ttl: '1s' })
    class HungLeader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(lock: Lock): Promise<void> {
        terms.push(lock.fencingToken);
        return new Promise<void>(() => undefined); // ignores its signal, never settles
      }
      onLeadershipLost(): void {
        lostCalls += 1;
      }
    }
    const app = await startJobApp([HungLeader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader('hung-hook'), { timeout: 5_000 }).toBe(true);
    expect(terms).toHaveLength(1);
    const first = leadership.leaderLock('hung-hook')!;

    // The lease goes (as after a failover or an operator's DEL): the next renewal is refused.
    await redis.del('lock:{hung-hook}');
    await expect.poll(() => first.signal.aborted, { timeout: 5_000 }).toBe(true);
    expect(leadership.isLeader('hung-hook')).toBe(false);

    // Nobody else leads: the documented election "tries to take the lease every retryMs while it
    // does not lead", so this instance must take it again (a second term, the next token).
    await expect.poll(() => redis.exists('lock:{hung-hook}'), { timeout: 8_000 }).toBe(1);
    await expect.poll(() => leadership.isLeader('hung-hook'), { timeout: 8_000 }).toBe(true);
    expect((await app.get(LockService).inspect('hung-hook')).holder?.label).toBe('HungLeader (@LeaderElection)');
  }, 30_000);

  // docs/jobs-and-leaders.md, "Shutdown": the module waits for the leader's hooks, at most
  // shutdownTimeout; "a leader's onLeadershipLost runs next". Chained behind a hook that never
  // settles, it never runs.
  it('at shutdown, calls onLeadershipLost once the hook has had its shutdownTimeout', async () => {
    let lostCalls = 0;
    @Injectable()
    @LeaderElection('hung-hook-close', { ttl: '60s' })
    class HungLeader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(): Promise<void> {
        return new Promise<void>(() => undefined);
      }
      onLeadershipLost(): void {
        lostCalls += 1;
      }
    }
    const app = await startJobApp([HungLeader], { shutdownTimeout: 300 });
    await expect.poll(() => app.get(LeadershipService).isLeader('hung-hook-close'), { timeout: 5_000 }).toBe(true);
    await closeNow(app);
    expect(app.logs.has('warn', 'The hooks of HungLeader were still running 300 ms')).toBe(true);
    expect(await redis.exists('lock:{hung-hook-close}')).toBe(0);
    // Fails: 0
    expect(lostCalls).toBe(1);
  });
});
