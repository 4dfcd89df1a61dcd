import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The rest of the suite runs terminus 12 on Nest 12; the indicator is declared for terminus 11
 * too. Install the packed package beside Nest 11 and terminus 11 in a scratch project and run
 * terminus's own HealthCheckService with it.
 */
describe('RedisLockHealthIndicator on @nestjs/terminus 11 and Nest 11 (CommonJS)', () => {
  useRedis();
  const dir = mkdtempSync(join(tmpdir(), 'terminus11-consumer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports up, and down when Redis does not answer', { timeout: 240_000 }, () => {
    execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: root, stdio: 'pipe' });
    const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'))!;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'terminus11-consumer',
        private: true,
        dependencies: {
          '@nestjs/common': '^11.0.0',
          '@nestjs/core': '^11.0.0',
          '@nestjs/terminus': '^11.0.0',
          ioredis: '^5.0.0',
          'reflect-metadata': '^0.2.0',
          rxjs: '^7.8.0',
          'nestjs-redis-lock': `file:./${tarball}`,
        },
      }),
    );
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    copyFileSync(fileURLToPath(new URL('./terminus11-app.cjs', import.meta.url)), join(dir, 'app.cjs'));
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
