import { shownKind } from '../core/keys/shown-kind.js';

/**
 * What a bad argument was, for a FencedRedis error message: `typeof` says "object" for `null`, an
 * array and a `Map` alike, and a message should name the caller's mistake.
 */
export function argumentKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Map) return 'a Map (pass an object of fields: Object.fromEntries(map))';
  if (typeof value === 'number') return String(value);
  // A class name can be any text (a factory's class, a computed name): shown as option values are.
  if (typeof value === 'object' || typeof value === 'symbol') return shownKind(value);
  return typeof value;
}

/** An object literal (or `Object.create(null)`): what `hset()` takes as fields, where a `Map`'s entries are not own properties. */
export function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === Object.prototype || prototype === null;
}
