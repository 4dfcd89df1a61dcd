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

  it('keeps the heap flat over waits, handoffs and given-up waits, and exits by itself after close', { timeout: 90_000 }, async () => {
    const worker = ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'memory-contended', KEY: 'contended', ITERATIONS: 4_000 }, 'memory-contended', ['--expose-gc']);
    const result = await worker.next<{ heapBefore: number; heapAfter: number; acquired: number; gaveUp: number }>('heapBefore', 80_000);
    const exit = await worker.exitsOnItsOwn(2_000);
    const growthKiB = (result.heapAfter - result.heapBefore) / 1024;
    report('leaks-contended', { acquisitions: result.acquired, gaveUp: result.gaveUp, growthKiB, exitAfterCloseMs: exit });
    expect(result.acquired).toBeGreaterThan(3_000);
    expect(result.gaveUp).toBeGreaterThan(0);
    expect(growthKiB).toBeLessThan(1_024);
    const [, keys] = await redis.scan('0', 'MATCH', 'lock:{contended:*}', 'COUNT', 1_000);
    // Fencing counters stay (see docs/redis-data.md); locks, queues and waiter sets do not.
    expect(keys.filter((name) => !name.endsWith(':fence'))).toEqual([]);
  });
});
