/**
 * Found by review (forty-third session): `@Locked`, `@WithoutOverlapping()` and `@OnOneInstance()`
 * on a class field (or called as standard decorators) refused it naming the class and the member
 * as they are (`@Locked on <class>.<member>: only methods ...`), while their other errors show
 * such names quoted, escaped and cut. A class made by a factory, or a computed member name, can
 * hold a newline that forges a log line, ANSI escapes, bidi overrides, or thousands of characters.
 */
import { describe, expect, it } from 'vitest';
import { Locked, OnOneInstance, RedisLockError, WithoutOverlapping } from '../../lib/index.js';
import { classNamed, thrownBy } from '../support/thrown-by.js';

type Legacy = (target: object, key: string | symbol, descriptor?: PropertyDescriptor) => void;
type Standard = (value: unknown, context: { kind: string; name: string | symbol; static: boolean }) => void;

const FORGED = `\nERROR [RedisLock] forged line \u001b[31m\u202e ${'x'.repeat(3_000)}`;

const decorators: [string, () => unknown][] = [
  ['@Locked', () => Locked('order:<0>')],
  ['@WithoutOverlapping()', () => WithoutOverlapping()],
  ['@OnOneInstance()', () => OnOneInstance()],
];

function expectShownSafely(error: Error): void {
  expect(error).toBeInstanceOf(RedisLockError);
  // Failed: the message held the raw newline, escape, bidi override and all 3,000 characters.
  expect(error.message).not.toMatch(/[\n\u001b\u202e]/);
  expect(error.message.length).toBeLessThan(1_000);
}

describe.each(decorators)('%s refusing what is no method', (name, make) => {
  it('shows a class name set at runtime escaped and cut', () => {
    const type = classNamed(`Orders${FORGED}`);
    const error = thrownBy(() => (make() as Legacy)(type.prototype, 'handle'));
    expect(error.message).toContain(`${name} on "Orders`);
    expectShownSafely(error);
  });

  it('shows a computed member name escaped and cut', () => {
    const error = thrownBy(() => (make() as Legacy)(classNamed('Orders').prototype, `handle${FORGED}`));
    expect(error.message).toContain(`${name} on "Orders.handle`);
    expectShownSafely(error);
  });

  it('shows a standard decorator context name escaped and cut', () => {
    const error = thrownBy(() => (make() as unknown as Standard)(function ship() {}, { kind: 'method', name: `ship${FORGED}`, static: false }));
    expect(error.message).toContain(`${name} on "ship`);
    expectShownSafely(error);
  });

  it('still shows plain names as written', () => {
    const error = thrownBy(() => (make() as Legacy)(classNamed('Orders').prototype, 'handle'));
    expect(error.message).toMatch(new RegExp(`^${name.replace(/[()]/g, '\\$&')} on Orders\\.handle: only methods`));
  });
});

describe.each([
  ['@Locked', Locked],
  ['@WithoutOverlapping', WithoutOverlapping],
  ['@OnOneInstance', OnOneInstance],
])('%s applied without its call by a standard (TC39) build', (name, factory) => {
  it('shows the member name of its context escaped and cut', () => {
    const error = thrownBy(() => (factory as unknown as Standard)(function ship() {}, { kind: 'method', name: `ship${FORGED}`, static: false }));
    expect(error.message).toContain(`${name} on "ship`);
    expectShownSafely(error);
  });
});
