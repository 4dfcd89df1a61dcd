import { describe, expect, it } from 'vitest';
import { LeadershipService } from '../../lib/index.js';
import { leaderThatStepsDown } from './step-down-leader.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

/**
 * Found by the simulation explorer (forty-sixth session, `npm run explore -- --seed 1 --path
 * 227`). A term that stepped down (its onLeadershipAcquired threw) waits for its runAsLeader()
 * work before onLeadershipLost. When that work was still running at the close's bound
 * (`shutdownTimeout`), the close ended without ever telling the class: `stop()` told only the
 * term the instance led as the close began, and a stepped-down one is no longer that. The
 * class is told at the bound now, beside the work, as a term led at the close is.
 */
describe('a term stepped down before app.close(), its runAsLeader() work outliving the close', () => {
  useRedis();

  it('hears onLeadershipLost by the end of the close', async () => {
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const { Leader, fail } = leaderThatStepsDown('work-outlives-close', () => order.push('lost'));
    const app = await startJobApp([Leader], { shutdownTimeout: 500 });
    let work: Promise<unknown> | undefined;
    try {
      const leadership = app.get(LeadershipService);
      await expect.poll(() => leadership.isLeader('work-outlives-close'), { timeout: 5_000 }).toBe(true);
      // Work that ignores its term's signal until the gate opens, after the close.
      work = leadership.runAsLeader('work-outlives-close', async () => {
        await gate;
        order.push('work-ended');
      });
      fail();
      await expect.poll(() => leadership.isLeader('work-outlives-close'), { timeout: 5_000 }).toBe(false);
      expect(order).toEqual([]);
      await app.close();
      expect(order).toEqual(['lost']);
      expect(app.logs.has('warn', 'were still running 500 ms (shutdownTimeout)')).toBe(true);
    } finally {
      openGate();
      await work;
    }
  }, 30_000);
});
