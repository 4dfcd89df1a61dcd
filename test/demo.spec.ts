import { spawn } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startPostgresServer } from './support/postgres-server.js';
import { redisUrl, useRedis } from './support/redis.js';

const demo = fileURLToPath(new URL('../scripts/demo.mjs', import.meta.url));

async function runDemo(env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const child = spawn(process.execPath, [demo, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  // The cron library warns on stderr when a blocked or starved event loop made a tick late (a
  // loaded machine, PGlite starting): that is the scheduler's own report, not the demo failing.
  // So are the library's warnings that Redis answered late (a CI run with the machine's load
  // at 9 printed both): they say what a slow Redis costs, and the figures are checked below.
  const slow = [
    /^\[Cron\] Missed execution deadline by \d+ms for job "stock-count"/,
    /WARN \[RedisLock\] PriceFeed could not try for the leadership "price-feed" \(tryAcquire\("price-feed"\): Redis did not answer within \d+ ms\.\); retrying\.$/,
    /WARN \[RedisLock\] Release messages for lock "[\w:-]+" could not be subscribed within \d+ ms; waiters poll every \d+ ms meanwhile\.$/,
  ];
  const ours = stderr
    .split('\n')
    .filter((line) => !slow.some((pattern) => pattern.test(line.replace(/\x1b\[[0-9;]*m/g, ''))))
    .join('\n');
  return { stdout, stderr: ours, code };
}

/**
 * The paused-holder rows: with fencing the stalled write is refused (409) and the balance exact;
 * without, both deposits are answered 201 and one of them is lost.
 */
function expectPausedHolderRows(figures: DemoFigures, rival: string): void {
  const [fenced, unfenced] = figures.rows.slice(-2);
  expect(fenced).toMatchObject({ scenario: 'paused holder, fenced write', requests: 2, ok: 1, conflicts: 1, stalledStatus: 409, expected: 10, actual: 10, exact: true, rivalInstance: rival });
  expect(unfenced).toMatchObject({ scenario: 'paused holder, unfenced', requests: 2, ok: 2, conflicts: 0, stalledStatus: 201, expected: 20, actual: 10, exact: false, rivalInstance: rival });
  expect(figures.stalledLossLines).toBe(2);
}

/** The demo's figures, from the JSON line `--json` adds. */
interface DemoFigures {
  store: 'redis' | 'memory';
  database: 'pglite' | 'postgres';
  /** "Lock lost" log lines of the stalled deposits, which the demo keeps out of its output. */
  stalledLossLines: number;
  rows: { scenario: string; requests: number; ok: number; conflicts: number; expected: number; actual: number; exact: boolean; stalledStatus?: number; rivalInstance?: string }[];
  report: { ranMs: number; ttl: number; renewals: number; lockLost: boolean };
  secondReportStatus: number;
  jobs?: {
    instances: { instance: string; stopped: boolean; runs: number; slowRuns: number; feedTerms: number[]; published: number }[];
    ticks: number;
    skippedTicks: number;
    duplicateTicks: number[];
    overlaps: number;
    feedOverlaps: number;
    handover: { job: { from: string; to: string | null }; feed: { from: string | null; to: string | null } };
  };
}

describe('npm run demo (three instances of the sample app, driven over HTTP)', () => {
  useRedis();

  it('keeps the locked balance exact, answers 409 when failing fast, renews the long job, and runs each cron tick and the feed on one instance', async () => {
    const { stdout, stderr, code } = await runDemo({ ...process.env, REDIS_URL: redisUrl() });
    expect(stderr, `the demo printed:\n${stdout}`).toBe('');
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
    expect(stdout).toContain('the late write was refused (409) and the balance is exact; without it, it overwrote the other deposit (balance 10 instead of 20: a lost update)');
    expect(figures.database).toBe('pglite');
    expectPausedHolderRows(figures, 'app-1');

    expect(figures.store).toBe('redis');
    const jobs = figures.jobs!;
    expect(stdout).toContain('Scheduled jobs across 3 instances');
    expect(jobs.instances.map((row) => row.instance)).toEqual(['app-1', 'app-2', 'app-3']);
    expect(jobs.ticks).toBeGreaterThanOrEqual(5);
    expect(jobs.duplicateTicks).toEqual([]);
    expect(jobs.overlaps).toBe(0);
    expect(jobs.feedOverlaps).toBe(0);
    // The job and the feed each moved off the instance that was stopped, to one still up.
    const up = jobs.instances.filter((row) => !row.stopped).map((row) => row.instance);
    expect(up).toContain(jobs.handover.job.to);
    expect(up).toContain(jobs.handover.feed.to);
    expect(jobs.handover.job.to).not.toBe(jobs.handover.job.from);
    // Every feed term has its own, higher fencing token.
    const tokens = jobs.instances.flatMap((row) => row.feedTerms).sort((a, b) => a - b);
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});

describe('npm run demo on a machine with Node only (no redis-server, no REDIS_URL)', () => {
  it('runs the sample app on the in-memory store, says so, and keeps the locked balance exact', async () => {
    // A PATH where only node is found.
    const bin = mkdtempSync(join(tmpdir(), 'only-node-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: bin };
    delete env.REDIS_URL;
    const { stdout, stderr, code } = await runDemo(env);
    expect(stderr, `the demo printed:\n${stdout}`).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('running the sample app on the in-memory lock store');
    expect(stdout).toContain('apt-get install redis-server');
    const figures = JSON.parse(stdout.trim().split('\n').pop()!) as DemoFigures;
    expect(figures.store).toBe('memory');
    expect(figures.rows[0]).toMatchObject({ requests: 20, ok: 20, expected: 200, actual: 200, exact: true });
    expect(figures.rows[1]!.actual).toBe(figures.rows[1]!.ok * 10);
    expect(figures.report.renewals).toBeGreaterThanOrEqual(3);
    expect(figures.secondReportStatus).toBe(409);
    expect(figures.jobs).toBeUndefined();
    expectPausedHolderRows(figures, 'app-1');
  }, 120_000);
});

describe('npm run demo with DATABASE_URL (a real PostgreSQL server shared by the instances)', () => {
  const redis = useRedis();

  it('keeps the balances there, and the paused holder\'s rival is another instance', async () => {
    const postgres = await startPostgresServer();
    try {
      const { stdout, stderr, code } = await runDemo({ ...process.env, REDIS_URL: redisUrl(), DATABASE_URL: postgres.url });
      expect(stderr, `the demo printed:\n${stdout}`).toBe('');
      expect(code).toBe(0);
      expect(stdout).toContain('Balances: PostgreSQL at DATABASE_URL.');
      const figures = JSON.parse(stdout.trim().split('\n').pop()!) as DemoFigures;
      expect(figures.database).toBe('postgres');
      expect(figures.rows[0]).toMatchObject({ requests: 20, ok: 20, expected: 200, actual: 200, exact: true });
      expectPausedHolderRows(figures, 'app-2');
      // The balances are in the server, where another client reads them.
      const { default: pg } = await import('pg');
      const client = new pg.Client(postgres.url);
      await client.connect();
      try {
        const { rows } = await client.query<{ id: string; balance: string; fence: string }>("SELECT id, balance, fence FROM accounts WHERE id LIKE '%-stalled-fenced'");
        // The rival of the stalled holder wrote last, with the key's latest token.
        expect(rows).toEqual([{ id: expect.any(String), balance: '10', fence: await redis.get(`sample-lock:{account:${rows[0]?.id}}:fence`) }]);
      } finally {
        await client.end();
      }
    } finally {
      await postgres.stop();
    }
  }, 120_000);
});
