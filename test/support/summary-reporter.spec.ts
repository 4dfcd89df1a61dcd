import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The summary reporter on a run of its own (two fixture files, retry 1): what a CI log shows of a
// flaky test and of a file whose beforeAll threw. Before, a flaky test was named without why it
// failed (the retry's success hid the error from the log), and a file that failed in a hook
// counted its tests as skipped: the last line said "0 failed" for a red run.
describe('the summary reporter', () => {
  const dir = mkdtempSync(join(tmpdir(), 'summary-reporter-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names a flaky test with its failed attempt\'s error, and counts a file failed in a hook', () => {
    writeFileSync(
      join(dir, 'flaky.spec.ts'),
      "import { it } from 'vitest';\nlet attempts = 0;\nit('passes the second time', () => {\n  if (++attempts === 1) throw new Error('first attempt fails\\nsecond line');\n});\n",
    );
    writeFileSync(
      join(dir, 'hook.spec.ts'),
      "import { beforeAll, describe, it } from 'vitest';\ndescribe('set-up', () => {\n  beforeAll(() => {\n    throw new Error('the deployment did not start');\n  });\n  it('never runs', () => undefined);\n});\n",
    );
    writeFileSync(
      join(dir, 'vitest.config.mjs'),
      `export default { test: { include: ['*.spec.ts'], retry: 1, reporters: [${JSON.stringify(resolve('test/support/summary-reporter.ts'))}] } };\n`,
    );
    const run = spawnSync(process.execPath, [resolve('node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--config', join(dir, 'vitest.config.mjs')], {
      encoding: 'utf8',
      // Not this run's own vitest variables: the child is a run of its own.
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_ENV' && name !== 'TEST')), NO_COLOR: '1' },
      timeout: 60_000,
    });
    const out = run.stdout;
    expect(out).toContain(`flaky (failed, then passed when run again): ${dir}/flaky.spec.ts > passes the second time\n  its failed attempt: Error: first attempt fails`);
    expect(out).not.toContain('second line');
    expect(out).toContain(`failed outside its tests (a hook or the file itself): ${dir}/hook.spec.ts: Error: the deployment did not start`);
    expect(out.trimEnd().split('\n').pop()).toBe('vitest: 1 passed, 1 failed, 1 skipped');
  });
});
