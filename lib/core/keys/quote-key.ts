import { cutWhole } from './cut-text.js';

/** Longest part of a key shown in a log line or an error message. */
const SHOWN_KEY_LENGTH = 200;

/**
 * What JSON leaves raw and a terminal, log viewer or browser still acts on: DEL and the C1
 * controls (NEL is a newline, CSI starts an escape sequence), the line and paragraph separators,
 * every invisible formatting character (Unicode's `Cf`: bidirectional overrides and isolates,
 * zero-width characters, tag characters, number signs) and lone surrogates. The lock board's page
 * escapes the same set (`lock-board.assets.ts`).
 */
export const UNSAFE_TEXT = '[\\u007f-\\u009f\\u2028\\u2029\\u2065\\p{Cf}\\p{Cs}]';
const UNSAFE = new RegExp(UNSAFE_TEXT, 'gu');

/** `text` with every character of `UNSAFE_TEXT` written as `\uXXXX` (an astral one as its two halves). */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, (char) => {
    let escaped = '';
    for (let i = 0; i < char.length; i++) escaped += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return escaped;
  });
}

/**
 * A user's key as shown in logs and error messages: quoted and escaped (no raw newlines or
 * control characters to forge log lines with) and cut to a bounded length.
 */
export function quoteKey(key: string): string {
  return quoteText(key, SHOWN_KEY_LENGTH);
}

/** Any user text as shown in a message: quoted, escaped as `quoteKey` does, cut to `max` characters. */
export function quoteText(text: string, max: number): string {
  return escapeUnsafe(JSON.stringify(cutShown(text, max)));
}

/**
 * A user's key as a JSON value shows it (`JSON.stringify(lock)`, read by JSON loggers): escaped
 * and cut as `quoteKey` does, not quoted (JSON quotes it).
 */
export function shownKey(key: string): string {
  return escapeUnsafe(cutShown(key, SHOWN_KEY_LENGTH));
}

function cutShown(text: string, max: number): string {
  // Never through an emoji: its first half would be shown as an escape the text does not hold.
  return text.length > max ? `${cutWhole(text, max)}…` : text;
}
