import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// 78fa5c1: stop() aborts lost()'s `lostWait`, which cuts BOTH of lost()'s bounded waits short,
// including the one on onLeadershipLost itself. An onLeadershipLost already running when
// app.close() starts is no longer waited for (before 78fa5c1 it was, up to shutdownTimeout, as
// docs/jobs-and-leaders.md says: "at shutdown both are bounded by shutdownTimeout"). app.close()
// resolves, the module's connections close, and the hook carries on against a shut-down module.
describe('a lost term whose onLeadershipLost is still running when app.close() starts', () => {
  const redis = useRedis();

  it('is waited for (within shutdownTimeout) before app.close() resolves', async () => {
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let cleanup: string | undefined;
    let locks!: LockService;
    @Injectable()
    @LeaderElection('lost-slow-hook-then-close', { ttl: '4s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(): void {
        order.push('acquired');
      }
      async onLeadershipLost(): Promise<void> {
        order.push('lost-started');
        await gate; // some finite winding-down work
        // ...which uses the module (a cleanup under a lock of its own).
        try {
          const lock = await locks.tryAcquire('lost-slow-hook-cleanup');
          await lock?.release();
          cleanup = lock ? 'ok' : 'busy';
        } catch (error) {
          cleanup = `${(error as Error).constructor.name}: ${(error as Error).message}`;
        }
        order.push('lost-done');
      }
    }
    const app = await startJobApp([Leader], { shutdownTimeout: 20_000 });
    locks = app.get(LockService);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader('lost-slow-hook-then-close'), { timeout: 5_000 }).toBe(true);
    const term: Lock = leadership.leaderLock('lost-slow-hook-then-close')!;
    await expect.poll(() => order, { timeout: 5_000 }).toEqual(['acquired']);
    // The lease is lost (another process took it / Redis lost it).
    await redis.del('lock:{lost-slow-hook-then-close}');
    await expect.poll(() => term.signal.aborted, { timeout: 5_000 }).toBe(true);
    await expect.poll(() => order, { timeout: 5_000 }).toEqual(['acquired', 'lost-started']);

    const closing = closeNow(app).then(() => order.push('closed'));
    // Let shutdown get going, then let the hook finish its work (well within shutdownTimeout).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    order.push('gate-opened');
    openGate();
    await closing;
    await expect.poll(() => order.includes('lost-done'), { timeout: 5_000 }).toBe(true);
    // Fails: ['acquired', 'lost-started', 'closed', 'gate-opened', 'lost-done'] -- app.close()
    // resolved while onLeadershipLost was still running, and its cleanup then hit a closed module.
    expect(order).toEqual(['acquired', 'lost-started', 'gate-opened', 'lost-done', 'closed']);
    expect(cleanup).toBe('ok');
  }, 60_000);
});
