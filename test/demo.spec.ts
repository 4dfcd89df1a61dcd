import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from './support/redis.js';

const demo = fileURLToPath(new URL('../scripts/demo.mjs', import.meta.url));

/** The demo's figures, from the JSON line `--json` adds. */
interface DemoFigures {
  rows: { scenario: string; requests: number; ok: number; conflicts: number; expected: number; actual: number; exact: boolean }[];
  report: { ranMs: number; ttl: number; renewals: number; lockLost: boolean };
  secondReportStatus: number;
}

describe('npm run demo (the sample app, driven over HTTP)', () => {
  useRedis();

  it('keeps the locked balance exact, answers 409 when failing fast, and renews the long job', async () => {
    const child = spawn(process.execPath, [demo, '--json'], { env: { ...process.env, REDIS_URL: redisUrl() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('locked, waits for its turn');
    const figures = JSON.parse(stdout.trim().split('\n').pop()!) as DemoFigures;
    const [waiting, failFast] = figures.rows;
    expect(waiting).toMatchObject({ requests: 20, ok: 20, conflicts: 0, expected: 200, actual: 200, exact: true });
    expect(failFast!.ok).toBeGreaterThanOrEqual(1);
    expect(failFast!.ok + failFast!.conflicts).toBe(20);
    expect(failFast!.actual).toBe(failFast!.ok * 10);
    expect(figures.report.ranMs).toBeGreaterThan(3 * figures.report.ttl);
    expect(figures.report.renewals).toBeGreaterThanOrEqual(3);
    expect(figures.report.lockLost).toBe(false);
    expect(figures.secondReportStatus).toBe(409);
  });
});
