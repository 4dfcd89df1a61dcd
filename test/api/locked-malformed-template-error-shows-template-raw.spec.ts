/**
 * Found by review (forty-third session): `@Locked` refusing a malformed key template showed the
 * template whole (`JSON.stringify`: a 100,000-character template made a 100 KB message, and bidi
 * overrides, C1 controls and line separators stayed raw) and the bad placeholder as it is
 * (`"<body>" is not a placeholder`: a newline in it forged a log line). A template built at
 * runtime (from configuration, a tenant's prefix) is the user's text, shown as keys are.
 */
import { describe, expect, it } from 'vitest';
import { Locked, LockKeyError } from '../../lib/index.js';
import { thrownBy } from '../support/thrown-by.js';

type Legacy = (target: object, key: string, descriptor: PropertyDescriptor) => void;

const FORGED = `\nERROR [RedisLock] forged line \u001b[31m\u009b31m\u202e\u2028`;

function refuse(template: string): Error {
  class Orders {}
  const descriptor = { value: async (_id: string) => {}, writable: true, enumerable: false, configurable: true };
  return thrownBy(() => (Locked(template) as unknown as Legacy)(Orders.prototype, 'pay', descriptor));
}

function expectShownSafely(error: Error): void {
  expect(error).toBeInstanceOf(LockKeyError);
  expect(error.message).toContain('@Locked on Orders.pay: the key template "order:');
  // Failed: the message held the raw newline, escapes, override and separator, or the whole template.
  expect(error.message).not.toMatch(/[\n\u001b\u009b\u202e\u2028]/);
  expect(error.message.length).toBeLessThan(1_000);
}

describe('@Locked refusing a malformed key template', () => {
  it('shows a placeholder that is none escaped and cut', () => {
    const error = refuse(`order:<id${FORGED}${'x'.repeat(3_000)}>`);
    expect(error.message).toContain('is not a placeholder');
    expectShownSafely(error);
  });

  it('shows a 100,000-character template escaped and cut', () => {
    const error = refuse(`order:${FORGED}${'x'.repeat(100_000)}>`);
    expect(error.message).toContain('unmatched ">"');
    expectShownSafely(error);
  });

  it('still shows a short template and placeholder as written', () => {
    expect(refuse('order:<id>').message).toBe(
      '@Locked on Orders.pay: the key template "order:<id>" is malformed: "<id>" is not a placeholder: write <n> or <n.property>, n being an argument index.',
    );
  });
});
