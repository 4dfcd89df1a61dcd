import { quoteText } from './quote-key.js';

/**
 * What a value that is no string, number or array is, for an error message: `typeof` says
 * "object" for a Map, a Set, a Date and an object literal alike, and a symbol shown as "an object"
 * hid the mistake. A class name or a symbol's description can be any text (a computed name, a
 * description from input), so it is escaped and cut as a string value is unless it reads as code.
 */
export function shownKind(value: object | symbol): string {
  if (typeof value === 'symbol') return `a symbol (Symbol(${value.description === undefined ? '' : quoteText(value.description, 60)}))`;
  let name: unknown;
  try {
    const prototype = Object.getPrototypeOf(value) as object | null;
    if (prototype === Object.prototype || prototype === null) return 'an object';
    name = (prototype as { constructor?: { name?: unknown } }).constructor?.name;
  } catch {
    // A Proxy that throws: nothing better to say of it.
  }
  if (typeof name !== 'string' || name === '') return 'an object';
  if (/^[A-Za-z_$][\w$]{0,63}$/.test(name)) return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
  return `an instance of ${quoteText(name, 60)}`;
}
