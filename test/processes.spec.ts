import { describe, expect, it } from 'vitest';
import { runFixture } from './support/fixture-process.js';
import { redisUrl, useRedis } from './support/redis.js';

const worker = new URL('./fixtures/lock-worker.mjs', import.meta.url);

/** Runs the worker fixture (which imports the built package) and collects what it prints. */
const runWorker = (env: Record<string, string>) => runFixture(worker, env);

describe('across processes', () => {
  const redis = useRedis();

  it('two processes contending for one key never overlap, and the counter is exact', async () => {
    const env = { REDIS_URL: redisUrl(), MODE: 'contend', ITERATIONS: '60' };
    const runs = await Promise.all([runWorker(env), runWorker(env)]);
    for (const run of runs) {
      expect(run.code).toBe(0);
      expect(JSON.parse(run.lines[0]!)).toEqual({ overlaps: 0 });
    }
    expect(await redis.get('counter')).toBe('120');
  });

  it('a process exits by itself within 2 s of app.close(), its locks released', async () => {
    const run = await runWorker({ REDIS_URL: redisUrl(), MODE: 'hold' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.lines[0]!).held).toHaveLength(3);
    expect(run.lines).toContain('closed');
    expect(run.exitAfterClose).toBeLessThan(2_000);
    expect(await redis.exists('lock:{a}', 'lock:{b}', 'lock:{c}')).toBe(0);
  });
});
