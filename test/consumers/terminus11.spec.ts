import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { installConsumer, preparedConsumer } from './projects.mjs';

/**
 * The rest of the suite runs terminus 12 on Nest 12; the indicator is declared for terminus 11
 * too. Install the packed package beside Nest 11 and terminus 11 in a scratch project and run
 * terminus's own HealthCheckService with it.
 */
describe('RedisLockHealthIndicator on @nestjs/terminus 11 and Nest 11 (CommonJS)', () => {
  useRedis();
  // Installed once by npm test for every Node version's run, or here.
  const prepared = preparedConsumer('terminus11');
  const dir = prepared ?? mkdtempSync(join(tmpdir(), 'terminus11-consumer-'));
  afterAll(() => {
    if (prepared === undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('reports up, and down when Redis does not answer', { timeout: 240_000 }, () => {
    if (prepared === undefined) {
      const install = installConsumer('terminus11', dir);
      expect(install.status, install.stderr).toBe(0);
    }
    const run = spawnSync(process.execPath, ['app.cjs'], { cwd: dir, env: { ...process.env, REDIS_URL: redisUrl() }, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(result.terminus).toMatch(/^11\./);
    expect(result.nest).toMatch(/^11\./);
    expect(result.up).toMatchObject({ status: 'ok', info: { locks: { status: 'up', nodes: [{ status: 'up' }] } } });
    expect(result.down).toMatchObject({ thrown: 'ServiceUnavailableException', status: 'error', error: { locks: { status: 'down' } } });
  });
});
