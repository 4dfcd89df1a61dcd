import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { installConsumer, preparedConsumer } from './projects.mjs';
import { SUBPATHS } from './subpaths.js';

/**
 * The package is ESM; Nest 11 applications are CommonJS. Install the packed package beside
 * Nest 11 and ioredis 6 in a scratch project (so that it resolves its peers from there, as in a
 * real app) and run a CommonJS application with it. Nest 12 (ESM) and ioredis 5 are what the
 * rest of the suite uses.
 */
describe('a Nest 11 CommonJS application on ioredis 6', () => {
  useRedis();
  // Installed once by npm test for every Node version's run, or here.
  const prepared = preparedConsumer('nest11');
  const dir = prepared ?? mkdtempSync(join(tmpdir(), 'nest11-consumer-'));
  afterAll(() => {
    if (prepared === undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('requires the package and every subpath export, and locks with LockService, @Locked and the in-memory store', { timeout: 240_000 }, () => {
    if (prepared === undefined) {
      const install = installConsumer('nest11', dir);
      expect(install.status, install.stderr).toBe(0);
    }
    const run = spawnSync(process.execPath, ['app.cjs'], {
      cwd: dir,
      env: { ...process.env, REDIS_URL: redisUrl(), SUBPATHS: JSON.stringify(SUBPATHS) },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(result.nest).toMatch(/^11\./);
    expect(result.ioredis).toMatch(/^6\./);
    expect(result).toMatchObject({ fencingToken: expect.any(Number), busy: true, key: 'order:42', inMemory: { fencingToken: expect.any(Number), busy: true } });
    expect(Math.min(result.fencingToken, result.inMemory.fencingToken)).toBeGreaterThan(0);
    expect(result.missing).toEqual([]);
  });
});
