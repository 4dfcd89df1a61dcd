import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LeaderElection, OnOneInstance, WithoutOverlapping } from '../../lib/index.js';

// docs/jobs-and-leaders.md: "Options: `key` (jobs only) and `ttl` ... They are checked when the
// class is defined." checkJobOptions (lib/scheduling/job-spec.ts) and LeaderElection
// (lib/decorators/leader-election.decorator.ts) read `key` and `ttl` and drop every other name
// without a word, where the module's options refuse a name that is no option ("would be dropped
// without a word", lock-options.ts). A misspelt ttl (`tll`, `TTL`, `timeout`), or a `key` given
// to @LeaderElection, from JavaScript or an options object built elsewhere (TypeScript's excess
// property check covers object literals only), silently runs the job or election on the module's
// ttl: a 10-minute job under a 30 s default lease, or a key the user thought they set.
describe('job and election decorator options with a name that is no option', () => {
  it('@OnOneInstance({ tll }) is refused when the class is defined, naming the decorator, method and option', () => {
    const options = { tll: '10m' } as Record<string, unknown>;
    let refused: unknown;
    try {
      class Reports {
        @OnOneInstance(options as never)
        async nightly(): Promise<void> {}
      }
      void Reports;
    } catch (error) {
      refused = error;
    }
    // Fails: nothing is thrown; the job runs on the module's ttl.
    expect(refused).toBeInstanceOf(InvalidLockOptionsError);
    expect(String((refused as Error).message)).toMatch(/@OnOneInstance\(\) on Reports\.nightly.*tll/);
  });

  it('@WithoutOverlapping({ timeout }) is refused too', () => {
    const define = (): unknown => {
      class Exports {
        @WithoutOverlapping({ timeout: '5m' } as never)
        async run(): Promise<void> {}
      }
      return Exports;
    };
    // Fails: nothing is thrown.
    expect(define).toThrow(/timeout/);
  });

  it("@LeaderElection('k', { key }) is refused: key is for jobs only", () => {
    const define = (): unknown => {
      @LeaderElection('feed', { key: 'price-feed', ttl: '15s' } as never)
      class Feed {}
      return Feed;
    };
    // Fails: nothing is thrown; the election runs on "feed".
    expect(define).toThrow(/key/);
  });
});
