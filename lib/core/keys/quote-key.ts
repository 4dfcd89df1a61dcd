/** Longest part of a key shown in a log line or an error message. */
const SHOWN_KEY_LENGTH = 200;

/**
 * What JSON leaves raw and a terminal or log viewer still acts on: DEL and the C1 controls (NEL is
 * a newline, CSI starts an escape sequence), the line and paragraph separators, and the
 * invisible and bidirectional formatting characters that make a line read otherwise.
 */
const UNSAFE = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/**
 * A user's key as shown in logs and error messages: quoted and escaped (no raw newlines or
 * control characters to forge log lines with) and cut to a bounded length.
 */
export function quoteKey(key: string): string {
  return quoteText(key, SHOWN_KEY_LENGTH);
}

/** Any user text as shown in a message: quoted, escaped as `quoteKey` does, cut to `max` characters. */
export function quoteText(text: string, max: number): string {
  const shown = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(shown).replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
