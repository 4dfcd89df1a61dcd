import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked } from '../../lib/index.js';

/**
 * Found by review. The module refuses an option name it does not know ("A name that is no
 * option (`prefix` for `keyPrefix`) would be dropped without a word", lib/core/options/lock-options.ts
 * `checkKnown`), and so do the job decorators ("A misspelt name (`tll`) would run the job on the
 * module's ttl, or another key, without a word", lib/scheduling/job-spec.ts `checkJobOptions`).
 * `@Locked` does not (lib/core/options/locked-options.ts `checkLockedOptions`): options shared as a
 * constant, where TypeScript's excess-property check does not apply (one known name is enough to
 * pass its weak-type check), lose a misspelt `waitTimout` without a word, and the method waits the
 * module's 10 s where the author asked for none.
 */
describe('@Locked options with a misspelt name', () => {
  it('are refused when the class is defined, naming the option', () => {
    const SHARED = { onBusy: 'skip', waitTimout: 0 } as const;
    let failure: unknown;
    try {
      class Reports {
        @Locked('s28-report', SHARED)
        async build(): Promise<void> {}
      }
      void Reports;
    } catch (error) {
      failure = error;
    }
    // Before: no error; the lock waits for the module's waitTimeout.
    expect(failure).toBeInstanceOf(InvalidLockOptionsError);
    expect((failure as InvalidLockOptionsError).option).toBe('waitTimout');
    expect((failure as Error).message).toContain('@Locked on Reports.build');
  });
});
