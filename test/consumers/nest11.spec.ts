import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { SUBPATHS } from './subpaths.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The package is ESM; Nest 11 applications are CommonJS. Install the packed package beside
 * Nest 11 and ioredis 6 in a scratch project (so that it resolves its peers from there, as in a
 * real app) and run a CommonJS application with it. Nest 12 (ESM) and ioredis 5 are what the
 * rest of the suite uses.
 */
describe('a Nest 11 CommonJS application on ioredis 6', () => {
  useRedis();
  const dir = mkdtempSync(join(tmpdir(), 'nest11-consumer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('requires the package and every subpath export, and locks with LockService, @Locked and the in-memory store', { timeout: 240_000 }, () => {
    execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: root, stdio: 'pipe' });
    const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'))!;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'nest11-consumer',
        private: true,
        dependencies: {
          '@nestjs/common': '^11.0.0',
          '@nestjs/core': '^11.0.0',
          // The optional peers of the subpath exports, which the app requires too.
          '@nestjs/terminus': '^11.0.0',
          '@opentelemetry/api': '^1.9.0',
          ioredis: '^6.0.0',
          'reflect-metadata': '^0.2.0',
          rxjs: '^7.8.0',
          'nestjs-redis-lock': `file:./${tarball}`,
        },
      }),
    );
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    copyFileSync(fileURLToPath(new URL('./nest11-app.cjs', import.meta.url)), join(dir, 'app.cjs'));
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
