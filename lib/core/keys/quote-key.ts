/** Longest part of a key shown in a log line or an error message. */
const SHOWN_KEY_LENGTH = 200;

/**
 * A user's key as shown in logs and error messages: quoted and escaped (no raw newlines or
 * control characters to forge log lines with) and cut to a bounded length.
 */
export function quoteKey(key: string): string {
  const shown = key.length > SHOWN_KEY_LENGTH ? `${key.slice(0, SHOWN_KEY_LENGTH)}…` : key;
  return JSON.stringify(shown);
}
