import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runFixture } from './support/fixture-process.js';
import { redisUrl } from './support/redis.js';

const worker = new URL('./fixtures/node-redis-worker.mjs', import.meta.url);
const recordResolve = fileURLToPath(new URL('./fixtures/record-resolve.mjs', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'node-redis-loading-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the worker fixture (which imports the built package), at most 30 s. */
const runWorker = (env: Record<string, string>, nodeArgs: string[] = []) => runFixture(worker, { REDIS_URL: redisUrl(), ...env }, nodeArgs);

describe('loading and closing with node-redis (built package, separate process)', () => {
  it.each(['6', '5'])('exits on its own after app.close() and the clients are closed (node-redis %s)', { timeout: 40_000 }, async (version) => {
    const run = await runWorker({ CLIENT: 'node-redis', VERSION: version });
    expect(run.code).toBe(0);
    expect(run.lines).toContain('closed');
    // Nothing of ours is left to keep the event loop alive (a leaked timer or socket would hold it for seconds).
    expect(run.exitAfterClose).toBeLessThan(5_000);
    // Woken by the release message, 200 ms in, not by the 20 s lease running out.
    expect(Number(/handed over after (\d+) ms/.exec(run.lines.join('\n'))?.[1])).toBeLessThan(5_000);
  });

  it('loads nothing of `redis` when only ioredis is used', { timeout: 40_000 }, async () => {
    const log = join(scratch, 'resolved.txt');
    const run = await runWorker({ CLIENT: 'ioredis', RESOLVE_LOG: log }, ['--import', recordResolve]);
    expect(run.code).toBe(0);
    expect(run.lines).toContain('redis modules loaded: 0');
    const resolved = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    // The hook saw the package itself being loaded, and no module of node-redis.
    expect(resolved.some((url) => url.includes('/dist/core/stores/redis/lock-scripts.js'))).toBe(true);
    expect(resolved.filter((url) => /\/node_modules\/(redis|redis5|@redis)\//.test(url))).toEqual([]);
  });

  it('has no import of `redis` anywhere in the built package', () => {
    const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js'));
    expect(files.length).toBeGreaterThan(20);
    const importing = files.filter((file) => /(?:from\s*|import\s*\(\s*|require\s*\(\s*)['"](?:redis|@redis\/[^'"]+)['"]/.test(readFileSync(join(dist, file), 'utf8')));
    expect(importing).toEqual([]);
  });
});
