import { describe, expect, it } from 'vitest';
import { ChaosWorker } from './support/chaos-worker.js';
import { report } from './support/report.js';
import { redisUrl, useRedis } from '../support/redis.js';

const WORKERS = 4;
const ITERATIONS = 1_250;

describe('chaos: exclusion across processes', () => {
  const redis = useRedis();

  it(`${WORKERS} processes x ${ITERATIONS} contended read-modify-writes never overlap`, { timeout: 180_000 }, async () => {
    const started = performance.now();
    const workers = Array.from({ length: WORKERS }, (_, i) =>
      ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'exclusion', KEY: 'exclusion', ITERATIONS, TTL: 2_000 }, `exclusion-${i}`),
    );
    const results = await Promise.all(workers.map((worker) => worker.next<{ sections: [number, number, number][] }>('sections', 170_000)));
    await Promise.all(workers.map((worker) => worker.exitsOnItsOwn()));

    const sections = results.flatMap((result) => result.sections).sort((a, b) => a[1] - b[1]);
    let overlaps = 0;
    let tokenInversions = 0;
    for (let i = 1; i < sections.length; i++) {
      if (sections[i]![1] < sections[i - 1]![2]) overlaps++;
      if (sections[i]![0] <= sections[i - 1]![0]) tokenInversions++;
    }
    const counter = Number(await redis.get('exclusion:counter'));
    report('exclusion', {
      processes: WORKERS,
      acquisitions: sections.length,
      counter,
      overlaps,
      fencingInversions: tokenInversions,
      seconds: (performance.now() - started) / 1000,
    });
    expect(sections).toHaveLength(WORKERS * ITERATIONS);
    expect(counter).toBe(WORKERS * ITERATIONS);
    expect(overlaps).toBe(0);
    expect(tokenInversions).toBe(0);
  });
});
