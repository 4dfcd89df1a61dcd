import { describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { ChaosWorker } from './support/chaos-worker.js';
import { report } from './support/report.js';

describe('chaos: leaks', () => {
  const redis = useRedis();

  it('keeps the heap flat over 10,000 acquire/release pairs and exits by itself after close', { timeout: 60_000 }, async () => {
    const worker = ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'memory', KEY: 'memory', ITERATIONS: 10_000 }, 'memory', ['--expose-gc']);
    const { heapBefore, heapAfter } = await worker.next<{ heapBefore: number; heapAfter: number }>('heapBefore', 50_000);
    const exit = await worker.exitsOnItsOwn(2_000);
    const growthKiB = (heapAfter - heapBefore) / 1024;
    report('leaks', { pairs: 10_000, heapBeforeMiB: heapBefore / 2 ** 20, heapAfterMiB: heapAfter / 2 ** 20, growthKiB, exitAfterCloseMs: exit });
    expect(growthKiB).toBeLessThan(1_024);
    const [, keys] = await redis.scan('0', 'MATCH', 'lock:{memory:*}', 'COUNT', 1_000);
    expect(keys).toEqual([]);
  });
});
