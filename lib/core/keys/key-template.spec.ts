import { describe, expect, it } from 'vitest';
import { LockKeyError } from '../../errors/lock-key.error.js';
import { checkBuiltKey, parseKeyTemplate } from './key-template.js';

const where = 'Orders.pay';

describe('parseKeyTemplate', () => {
  it.each<[string, unknown[], string]>([
    ['order:<0>', ['42'], 'order:42'],
    ['order:<0>', [42], 'order:42'],
    ['user:<0.id>:cart:<1>', [{ id: 'u1' }, 7], 'user:u1:cart:7'],
    ['<0.a.b.c>', [{ a: { b: { c: true } } }], 'true'],
    ['<0.items.1>', [{ items: ['x', 'y'] }], 'y'],
    ['<1><0>', ['a', 'b'], 'ba'],
    ['n:<0>', [BigInt(10)], 'n:10'],
    ['fixed-key', [], 'fixed-key'],
    ['<0.$x_1>', [{ $x_1: 'ok' }], 'ok'],
  ])('%s gives %s', (template, args, key) => {
    expect(parseKeyTemplate(template, where)(args)).toBe(key);
  });

  it.each<[string, RegExp]>([
    ['', /non-empty string/],
    ['order:<0', /"<" at position 6 is not closed/],
    ['order:<>', /"<>" is not a placeholder/],
    ['order:<a>', /"<a>" is not a placeholder/],
    ['order:<-1>', /"<-1>" is not a placeholder/],
    ['order:<0.>', /"<0.>" is not a placeholder/],
    ['order:<0..a>', /"<0..a>" is not a placeholder/],
    ['order:<0 >', /"<0 >" is not a placeholder/],
    ['order:<0<1>>', /"<" at position 6 is not closed/],
    ['order>0', /unmatched ">" at position 5/],
    ['x'.repeat(1025), /at most 1024/],
  ])('refuses the malformed template %j, naming the method', (template, message) => {
    expect(() => parseKeyTemplate(template, where)).toThrow(LockKeyError);
    expect(() => parseKeyTemplate(template, where)).toThrow(/@Locked on Orders\.pay/);
    expect(() => parseKeyTemplate(template, where)).toThrow(message);
  });

  it('refuses a placeholder past the declared parameters', () => {
    expect(() => parseKeyTemplate('a:<2>', where, 2)).toThrow(/refers to argument 2, but the method declares 2 parameters/);
    expect(parseKeyTemplate('a:<1>', where, 2)(['x', 'y'])).toBe('a:y');
  });

  it.each<[string, unknown[], RegExp]>([
    ['order:<1>', ['a'], /placeholder <1> needs argument 1, but the method got 1 argument\./],
    ['order:<0>', [undefined], /placeholder <0> .* but argument 0 is undefined/],
    ['order:<0>', [null], /argument 0 is null/],
    ['order:<0>', [{ id: 1 }], /argument 0 is an object/],
    ['order:<0>', [[1]], /argument 0 is an array/],
    ['order:<0>', [() => 1], /argument 0 is a function/],
    ['order:<0>', [''], /argument 0 is an empty string/],
    ['order:<0>', [Number.NaN], /argument 0 is NaN/],
    ['order:<0>', [Symbol('s')], /argument 0 is a symbol/],
    ['order:<0.id>', [{}], /placeholder <0.id> .* argument 0.id is undefined/],
    ['order:<0.user.id>', [{ user: null }], /argument 0.user is null/],
    ['order:<0.id>', [null], /argument 0 is null/],
    ['order:<0.id>', ['str'], /reads property "id" of argument 0, but argument 0 is a string, which has none/],
  ])('%s with %j fails with LockKeyError naming method and placeholder', (template, args, message) => {
    const build = parseKeyTemplate(template, where);
    expect(() => build(args)).toThrow(LockKeyError);
    expect(() => build(args)).toThrow(/@Locked on Orders\.pay: placeholder </);
    expect(() => build(args)).toThrow(message);
  });
});

describe('checkBuiltKey', () => {
  it('passes a good key and names the method for a bad one', () => {
    expect(checkBuiltKey('k', where)).toBe('k');
    expect(() => checkBuiltKey(undefined, where)).toThrow(/@Locked on Orders\.pay: the key function returned a bad key\. The lock key must be a string, got undefined/);
    expect(() => checkBuiltKey('', where)).toThrow(/must not be empty/);
  });
});
