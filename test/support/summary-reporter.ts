import type { Reporter, TestModule } from 'vitest/node';

/** One error as the summary shows it: its first line, cut short. */
function shown(error: { name?: string; message: string }): string {
  const line = `${error.name ?? 'Error'}: ${error.message}`.split('\n')[0]!;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/**
 * Ends the run with one plain `N passed, N failed, N skipped` line, which CI systems that do
 * not know vitest's own summary can read, and names every test that passed only when run again
 * (vitest.config.ts's `retry`) with the error its failed attempt met: a flaky test is reported,
 * never hidden, and can be looked into from the log alone. A file that failed outside its tests
 * (a `beforeAll` that threw: its tests are skipped) counts as one failure and is named.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const flaky: string[] = [];
    const brokenFiles: string[] = [];
    for (const module of testModules) {
      const file = module.moduleId.replace(`${process.cwd()}/`, '');
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') counts.passed++;
        else if (result.state === 'failed') counts.failed++, failedTests++;
        else counts.skipped++;
        if (test.diagnostic()?.flaky) {
          const errors = result.state === 'passed' ? (result.errors ?? []) : [];
          flaky.push(`${file} > ${test.fullName}${errors.length > 0 ? `\n  its failed attempt: ${shown(errors[0]!)}` : ''}`);
        }
      }
      if (module.state() === 'failed' && failedTests === 0) {
        counts.failed++;
        const errors = [...module.errors(), ...[...module.children.allSuites()].flatMap((suite) => suite.errors())];
        brokenFiles.push(`${file}${errors.length > 0 ? `: ${shown(errors[0]!)}` : ''}`);
      }
    }
    for (const name of flaky) process.stdout.write(`\nflaky (failed, then passed when run again): ${name}`);
    if (flaky.length > 0) process.stdout.write(`\n${flaky.length} of the passed tests above were flaky.`);
    for (const file of brokenFiles) process.stdout.write(`\nfailed outside its tests (a hook or the file itself): ${file}`);
    // The last line keeps its shape: CI reads it.
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
