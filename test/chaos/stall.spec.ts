import { describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { ChaosWorker } from './support/chaos-worker.js';
import { report } from './support/report.js';

describe('chaos: event loop blocked past the lease deadline', () => {
  const redis = useRedis();

  it.each([
    ['past the local deadline, before Redis expires it', 995],
    ['past the whole lease', 1_500],
  ])('reports the lock lost when the loop resumes (%s)', { timeout: 30_000 }, async (_case, stall) => {
    const worker = ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'stall', KEY: 'stalled', TTL: 1_000, RENEW: 300, STALL: stall }, 'stall');
    const result = await worker.next<{ lost: string; detectedAfterResume: number; stalled: number; lostOnResume: boolean }>('lost');
    const exit = await worker.exitsOnItsOwn(2_000);
    report('event-loop-stall', { stalledMs: result.stalled, reason: result.lost, msFromResumeToLoss: result.detectedAfterResume, exitMs: exit });
    expect(result.lost).toMatch(/expired|refused/);
    // Declared from the due deadline timer, before a timer set on resume runs (and so before
    // any reply from Redis), however long a loaded machine takes to get there.
    expect(result.lostOnResume).toBe(true);
    expect(await redis.exists('lock:{stalled}')).toBe(0);
  });
});
