/**
 * Found by review (forty-third session): `@WithoutOverlapping()` and `@OnOneInstance()` refuse a
 * job method named by a Symbol naming it `Class[Symbol(<description>)]`, with the class name
 * escaped and cut but the Symbol's description as it is: a description made at runtime (from a
 * config, a plugin's name) put its newline (a forged log line), ANSI escapes, bidi overrides or
 * thousands of characters into the message.
 */
import { describe, expect, it } from 'vitest';
import { OnOneInstance, RedisLockError, WithoutOverlapping } from '../../lib/index.js';
import { thrownBy } from '../support/thrown-by.js';

type Legacy = (target: object, key: string | symbol, descriptor: PropertyDescriptor) => void;

const FORGED = `run\nERROR [RedisLock] forged line \u001b[31m\u202e ${'x'.repeat(3_000)}`;

describe.each([
  ['@WithoutOverlapping()', WithoutOverlapping],
  ['@OnOneInstance()', OnOneInstance],
])('%s on a method named by a Symbol', (name, decorator) => {
  function refuse(key: symbol): Error {
    class Reports {}
    const descriptor = { value: async () => {}, writable: true, enumerable: false, configurable: true };
    return thrownBy(() => (decorator() as unknown as Legacy)(Reports.prototype, key, descriptor));
  }

  it('shows a Symbol description made at runtime escaped and cut', () => {
    const error = refuse(Symbol(FORGED));
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error.message).toContain(`${name} on Reports[Symbol("run`);
    // Failed: the message held the raw newline, escape, bidi override and all 3,000 characters.
    expect(error.message).not.toMatch(/[\n\u001b\u202e]/);
    expect(error.message.length).toBeLessThan(1_000);
  });

  it('still shows a plain description, or none, as written', () => {
    expect(refuse(Symbol('run')).message).toContain(`${name} on Reports[Symbol(run)]: a job method must be named by a string`);
    expect(refuse(Symbol()).message).toContain(`${name} on Reports[Symbol()]: a job method must be named by a string`);
  });
});
