import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from './support/redis.js';

const worker = fileURLToPath(new URL('./fixtures/lock-worker.mjs', import.meta.url));

interface WorkerRun {
  lines: string[];
  code: number | null;
  /** Milliseconds from printing "closed" (after app.close()) to the process exiting. */
  exitAfterClose: number;
}

/** Runs the worker fixture (which imports the built package) and collects what it prints. */
function runWorker(env: Record<string, string>): Promise<WorkerRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let closedAt = 0;
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line === 'closed') closedAt = performance.now();
        lines.push(line);
      }
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ lines, code, exitAfterClose: closedAt === 0 ? Infinity : performance.now() - closedAt });
    });
  });
}

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
