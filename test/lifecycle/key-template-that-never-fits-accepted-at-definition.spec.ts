import { describe, expect, it } from 'vitest';
import { LockKeyError, Locked } from '../../lib/index.js';

/**
 * Found by review. docs/locks.md "Checked early": a template no call can fill is refused
 * "when the class is defined, naming class and method". A template without placeholders is checked
 * against the key rules then (lib/core/keys/key-template.ts `checkTemplateKey`), but one with a
 * placeholder is not: a literal text over 1,024 characters, or a lone surrogate between literal
 * characters (`'a\uD800:<0>'`), makes every key it builds one no lock can have, and each call fails
 * with a LockKeyError (an HTTP route answers 400 to every request, blaming the client's values).
 */
describe('a key template whose literal text alone breaks the key rules', () => {
  it.each([
    ['literal over 1,024 characters', `${'x'.repeat(1_100)}:<0>`],
    ['lone surrogate between literal characters', 'a\uD800:<0>'],
  ])('is refused when the class is defined: %s', (_case, template) => {
    let failure: unknown;
    try {
      class Reports {
        @Locked(template)
        async build(_id: string): Promise<void> {}
      }
      void Reports;
    } catch (error) {
      failure = error;
    }
    // Before: accepted; every call then fails with LockKeyError.
    expect(failure).toBeInstanceOf(LockKeyError);
    expect((failure as Error).message).toContain('@Locked on Reports.build');
  });
});
