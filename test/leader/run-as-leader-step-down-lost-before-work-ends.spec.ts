import { describe, expect, it } from 'vitest';
import { LeadershipService } from '../../lib/index.js';
import { leaderThatStepsDown } from './step-down-leader.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

/**
 * Found by review (thirtieth session, fixes). CHANGELOG (ceaa7ba): work run by runAsLeader() is
 * "waited for (within shutdownTimeout) before onLeadershipLost and the lease's release" at
 * app.close() or a step-down. At app.close() it is (stop() chains callLost behind the work); at a
 * step-down, stepDown() runs onLeadershipLost first and waits for the work only before the release.
 */
describe('runAsLeader() work at a step-down', () => {
  useRedis();

  it('ends before onLeadershipLost runs, as at app.close()', async () => {
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const { Leader, fail } = leaderThatStepsDown('work-lost-step-down', () => order.push('lost'));
    const app = await startJobApp([Leader]);
    try {
      const leadership = app.get(LeadershipService);
      await expect.poll(() => leadership.isLeader('work-lost-step-down'), { timeout: 5_000 }).toBe(true);
      const work = leadership.runAsLeader('work-lost-step-down', async (term) => {
        await new Promise((resolve) => term.signal.addEventListener('abort', resolve, { once: true }));
        order.push('work-told');
        await gate;
        order.push('work-ended');
      });
      fail();
      await expect.poll(() => order.includes('work-told'), { timeout: 5_000 }).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      openGate();
      await work;
      await expect.poll(() => order.length, { timeout: 5_000 }).toBe(3);
      expect(order).toEqual(['work-told', 'work-ended', 'lost']);
    } finally {
      await closeNow(app);
    }
  }, 30_000);
});
