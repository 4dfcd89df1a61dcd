import { defineConfig } from 'vitest/config';
import { isolatedSpecs } from './test/support/isolated-specs.js';
import LongFirstSequencer from './test/support/long-first-sequencer.js';

const include = ['lib/**/*.spec.ts', 'test/**/*.spec.ts'];
const isolated = isolatedSpecs(import.meta.dirname);

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll() waits for a mechanism to show, never for it to be fast: its default of 1 s
    // failed a fresh-clone run on a loaded machine (a locked cron tick run later than that).
    expect: { poll: { timeout: 10_000 } },
    // A test that fails is run once more: a fresh-clone run of 2,676 tests on two loaded cores
    // met one timing flake or more in four runs of five in the thirty-sixth session (a different
    // test each time, none failing twice). The summary line names each test that passed only
    // when run again (test/support/summary-reporter.ts): reported, never hidden.
    retry: 1,
    pool: 'forks',
    // Two cores, and most test files wait on servers and child processes (failovers, pauses,
    // worker processes) rather than compute: more workers than cores overlap those waits. Four
    // against three, fresh-clone runs of `bash .ci/run` on this machine: in the thirty-sixth
    // session vitest took 981 to 1,035 s against 1,085 to 1,115 s, but a GLIDE barging case
    // failed (a newcomer beaten by the woken waiter, a race the case now runs again); in the
    // thirty-seventh, 907 s against three runs of 997 to 1,060 s (982 s against 1,071 to
    // 1,142 s in all), no test needing its retry. Each file's imports are slower on the busier
    // cores (796 s against 542 to 616 s in all), the waits overlap more. The tests assert
    // mechanisms, not durations, so the extra contention costs no correctness; a timing flake
    // is run again and named (see retry above).
    maxWorkers: 4,
    // The files known to take longest start first (test/support/long-first-sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
    // Most files share their worker's process with the files run before it there: importing
    // Nest, the drivers and the library afresh for each file was most of the run (fresh-clone
    // runs of 1,172 to 1,260 s on this machine; 40 files of test/api took 309 s isolated against
    // 43 s shared, loaded). The files that change what a process shares run in one of their own
    // (test/support/isolated-specs.ts says which and why); the testing module's process-wide
    // store starts each shared file empty (test/support/shared-process-setup.ts). Both projects
    // draw on one pool of maxWorkers, whose worker ids (VITEST_POOL_ID, the database of redis.ts)
    // stay unique.
    projects: [
      { extends: true, test: { name: 'shared', include, exclude: isolated, isolate: false, setupFiles: ['test/support/shared-process-setup.ts'] } },
      { extends: true, test: { name: 'isolated', include: isolated } },
    ],
  },
});
