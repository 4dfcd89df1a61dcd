import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SUBPATHS } from './subpaths.js';

const root = fileURLToPath(new URL('../..', import.meta.url));


/**
 * A Nest 12 ESM application importing every subpath by the package's own name, through the
 * "exports" map of the built package (Node resolves a package's name from inside it). The Nest 11
 * CommonJS consumer (nest11.spec.ts) requires every subpath from the packed tarball.
 */
describe('a Nest 12 ESM application', () => {
  it('knows every subpath the package exports', async () => {
    const { exports } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
    const exported = Object.keys(exports).filter((path) => path !== './package.json').map((path) => (path === '.' ? 'nestjs-redis-lock' : `nestjs-redis-lock/${path.slice(2)}`));
    expect(exported.sort()).toEqual(Object.keys(SUBPATHS).sort());
  });

  it('imports every subpath export of the built package, with what each must provide', () => {
    const script = `
      const expected = ${JSON.stringify(SUBPATHS)};
      const missing = [];
      for (const [path, names] of Object.entries(expected)) {
        const module = await import(path);
        for (const name of names) if (module[name] === undefined) missing.push(path + ': ' + name);
      }
      const { version } = (await import('@nestjs/core/package.json', { with: { type: 'json' } })).default;
      console.log(JSON.stringify({ missing, nest: version }));
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(result.nest).toMatch(/^12\./);
    expect(result.missing).toEqual([]);
  });
});
