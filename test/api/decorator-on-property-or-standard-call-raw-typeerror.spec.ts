/**
 * Found by review (thirty-seventh session). `@Locked` (and `@WithoutOverlapping()`,
 * `@OnOneInstance()`) refuse what is not a method with "only methods can be locked, not accessors
 * or properties", but read `descriptor.value` first, and a decorator on a class field gets no
 * descriptor: `@Locked('k') handle = async () => { ... }` (JavaScript, or TypeScript built by a
 * transpiler that does not type-check) failed the class with a bare
 * `TypeError: Cannot read properties of undefined (reading 'value')`, naming neither the
 * decorator nor the member. So did every decorated method of a build that emits standard (TC39)
 * decorators, `(value, context)`: esbuild (vitest's default transform) does for a tsconfig
 * without `experimentalDecorators`, which Nest's decorators need.
 */
import { describe, expect, it } from 'vitest';
import { Locked, OnOneInstance, RedisLockError, WithoutOverlapping } from '../../lib/index.js';

type Legacy = (target: object, key: string | symbol, descriptor?: PropertyDescriptor) => void;
type Standard = (value: unknown, context: { kind: string; name: string | symbol; static: boolean }) => void;

class Orders {}

const decorators: [string, () => unknown][] = [
  ['@Locked', () => Locked('order:<0>')],
  ['@WithoutOverlapping()', () => WithoutOverlapping()],
  ['@OnOneInstance()', () => OnOneInstance()],
];

const failure = (decorate: () => void): unknown => {
  try {
    decorate();
    return 'accepted';
  } catch (error) {
    return error;
  }
};

describe.each(decorators)('%s', (name, make) => {
  it('on a class field: refused naming the decorator and the field', () => {
    // What TypeScript's legacy decorators call for a field: no descriptor.
    const error = failure(() => (make() as Legacy)(Orders.prototype, 'handle'));
    // Before: TypeError "Cannot read properties of undefined (reading 'value')".
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toMatch(new RegExp(`^${name.replace(/[()]/g, '\\$&')} on Orders\\.handle: only methods`));
  });

  it('called as a standard (TC39) decorator: refused saying experimentalDecorators is needed', () => {
    const error = failure(() => (make() as unknown as Standard)(function ship() {}, { kind: 'method', name: 'ship', static: false }));
    // Before: TypeError "Cannot read properties of undefined (reading 'value')".
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toContain(`${name} on ship: called as a standard (TC39) decorator`);
    expect((error as Error).message).toContain('experimentalDecorators');
  });
});
