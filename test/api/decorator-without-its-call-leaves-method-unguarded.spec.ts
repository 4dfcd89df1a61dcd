/**
 * Found by review (forty-first session). `@Locked` and the job decorators are factories:
 * `@Locked('order:<0>')`, `@WithoutOverlapping()`. Written without the call (`@Locked`,
 * `@WithoutOverlapping`: JavaScript built by Babel, a `@ts-ignore`, or a TypeScript build that
 * does not type-check), the factory itself is the decorator: it gets the prototype, the method's
 * name and its descriptor as `key` and `options`, and returns the real decorator, which
 * TypeScript's and Babel's helpers take as a new descriptor with nothing in it. The method stays
 * as written: a `@Locked` method runs unlocked, a `@WithoutOverlapping` cron overlaps itself and an
 * `@OnOneInstance` one runs on every instance, and nothing says so.
 */
import { describe, expect, it } from 'vitest';
import { Locked, OnOneInstance, RedisLockError, WithoutOverlapping } from '../../lib/index.js';

type Legacy = (target: object, key: string | symbol, descriptor?: PropertyDescriptor) => unknown;
type Standard = (value: unknown, context: { kind: string; name: string | symbol; static: boolean }) => unknown;

class Orders {
  async ship(): Promise<string> {
    return 'shipped';
  }
}

const factories: [string, unknown, string][] = [
  ['@Locked', Locked, "@Locked('<key template>')"],
  ['@WithoutOverlapping', WithoutOverlapping, '@WithoutOverlapping()'],
  ['@OnOneInstance', OnOneInstance, '@OnOneInstance()'],
];

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.each(factories)('%s written without its call', (name, factory, written) => {
  it('on a method: refused naming the method and how to write it, not left undecorated', () => {
    const descriptor = Object.getOwnPropertyDescriptor(Orders.prototype, 'ship')!;
    // What TypeScript's and Babel's legacy helpers call: the factory with (prototype, name, descriptor).
    const decorate = () => (factory as Legacy)(Orders.prototype, 'ship', descriptor);
    // Before: no error (a decorator function returned, which the helpers take as an empty descriptor).
    expect(decorate).toThrow(RedisLockError);
    expect(decorate).toThrow(new RegExp(`^${escaped(name)} on Orders\\.ship .*${escaped(written)}`));
  });

  it('as a standard (TC39) decorator: refused too', () => {
    const decorate = () => (factory as Standard)(Orders.prototype.ship, { kind: 'method', name: 'ship', static: false });
    expect(decorate).toThrow(RedisLockError);
    expect(decorate).toThrow(written);
  });
});

it('a method written with @Locked without its call is refused when the class is defined', () => {
  // A class declaration: TypeScript's legacy decorators are not applied in a class expression.
  const define = (): unknown => {
    class Payments {
      // @ts-expect-error: TypeScript refuses it; JavaScript and unchecked builds do not.
      @Locked
      async pay(): Promise<string> {
        return 'paid';
      }
    }
    return Payments;
  };
  // Before: no error, and pay() ran unlocked.
  expect(define).toThrow(RedisLockError);
});
