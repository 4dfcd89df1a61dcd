/**
 * `text` cut to at most `max` UTF-16 code units, never between the two halves of a surrogate
 * pair (an emoji): a name cut there would end in a lone surrogate, which a metric exporter
 * replaces or refuses.
 */
export function cutWhole(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` with each lone surrogate (a computed method name cut through an emoji) as U+FFFD: for
 * names the library builds from code, which label a lock and must be well-formed.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}
