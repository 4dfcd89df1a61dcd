import { quoteKey, UNSAFE_TEXT } from './quote-key.js';

/** A name that can be shown as it is: an identifier as code writes it. */
const PLAIN_NAME = /^[\p{ID_Start}$_][\p{ID_Continue}$]*$/u;
const UNSAFE = new RegExp(UNSAFE_TEXT, 'u');

/**
 * Names of code (`Class`, `Class.method`) as messages and events show them: as written when each
 * is an identifier, and quoted, escaped and cut as a key is (`quoteKey`) otherwise. A class or
 * method name is the user's text: a computed name, or one set at runtime, may hold a newline
 * that forges a log line, or thousands of characters logged at every tick.
 */
export function shownName(...parts: string[]): string {
  const joined = parts.join('.');
  const plain = joined.length <= SHOWN_NAME_LENGTH && !UNSAFE.test(joined) && parts.every((part) => PLAIN_NAME.test(part));
  return plain ? joined : quoteKey(joined);
}

/** Longest name shown as it is (quoteKey cuts a key at 200 characters too). */
const SHOWN_NAME_LENGTH = 200;
