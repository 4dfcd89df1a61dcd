import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['lib/**/*.spec.ts', 'test/**/*.spec.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Two cores, and most test files wait on servers and child processes (failovers, pauses,
    // worker processes) rather than compute: a third worker overlaps those waits. The tests
    // assert mechanisms, not durations, so the extra contention costs no correctness.
    maxWorkers: 3,
  },
});
