import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain `N passed, N failed, N skipped` line, which CI systems that do
 * not know vitest's own summary can read, and names every test that passed only when run again
 * (vitest.config.ts's `retry`): a flaky test is reported, never hidden.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const flaky: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
        if (test.diagnostic()?.flaky) flaky.push(`${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`);
      }
    }
    for (const name of flaky) process.stdout.write(`\nflaky (failed, then passed when run again): ${name}`);
    if (flaky.length > 0) process.stdout.write(`\n${flaky.length} of the passed tests above were flaky.`);
    // The last line keeps its shape: CI reads it.
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
