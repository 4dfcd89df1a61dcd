import { spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const check = fileURLToPath(new URL('../scripts/check-test-tools.mjs', import.meta.url));

describe('npm test on a machine without the Redis binaries', () => {
  it('stops at once with one line that says what is missing and how to install it', () => {
    const bin = mkdtempSync(join(tmpdir(), 'only-node-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: bin };
    delete env.CHROMIUM_PATH;
    const run = spawnSync(process.execPath, [check], { env, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('redis-server, redis-cli, redis-sentinel');
    expect(lines[0]).toContain('apt-get install redis-server redis-sentinel chromium');
    expect(lines[0]).toContain('brew install redis');
  });

  it('says nothing and goes on when everything is there', () => {
    const run = spawnSync(process.execPath, [check], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe('');
  });
});
