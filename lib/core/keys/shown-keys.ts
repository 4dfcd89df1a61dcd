import { quoteKey } from './quote-key.js';

/** How many keys of a multi-key lock a message or a lock's JSON names; the rest are counted. */
export const SHOWN_KEYS = 3;

/** A multi-key lock's keys as a message shows them: quoted, the first three, then how many more. */
export function shownKeys(keys: readonly string[]): string {
  const shown = keys.slice(0, SHOWN_KEYS).map(quoteKey).join(', ');
  return keys.length > SHOWN_KEYS ? `${shown} and ${keys.length - SHOWN_KEYS} more` : shown;
}
