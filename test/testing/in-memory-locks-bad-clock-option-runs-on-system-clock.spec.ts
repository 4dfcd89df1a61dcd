import { describe, expect, it } from 'vitest';
import { InMemoryLocks } from '../../lib/testing/index.js';

/**
 * Found by review (lib/testing/in-memory-locks.ts, the constructor). The library's rule for bad
 * input is a clear error naming the option (docs/configuration.md: "Every option is validated
 * [...] and a bad one fails with an InvalidLockOptionsError naming the option and the value";
 * docs/testing.md: the manual clock is `new InMemoryLocks({ clock: 'manual' })`).
 *
 * `InMemoryLocks`' own options are not checked at all: `options.clock === 'manual' ? ManualClock
 * : systemClock`. A mistyped value (`'Manual'`, `'fake'`, `true`), a mistyped name (`clok`) or a
 * string given for the options object all give a store on the real clock without a word: the
 * test's leases and waits then run on real time, and the first hint is a TypeError from
 * `manualClock` (or, for a test that only advances through a helper, timeouts). `null` fails
 * with a raw "Cannot read properties of null".
 */
describe('new InMemoryLocks() given a bad option', () => {
  const cases: [string, unknown][] = [
    ["clock: 'Manual'", { clock: 'Manual' }],
    ['clock: true', { clock: true }],
    ["clok: 'manual' (no such option)", { clok: 'manual' }],
    ["'manual' for the options object", 'manual'],
    ['null for the options object', null],
  ];
  for (const [label, options] of cases) {
    it(`refuses ${label}, naming the option`, () => {
      let error: unknown;
      try {
        new InMemoryLocks(options as never);
      } catch (caught) {
        error = caught;
      }
      // Before: no error (a store on the system clock), or for null a raw TypeError about reading 'clock'.
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/InMemoryLocks/);
      expect((error as Error).message).toMatch(/clock|options/);
      expect((error as Error).message).not.toMatch(/Cannot read properties/);
    });
  }
});
