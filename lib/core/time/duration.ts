import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';

/** The units a duration string may end with, and their length in milliseconds. */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A length of time: a number of milliseconds, or a string of a number and a unit, `'500ms'`,
 * `'30s'`, `'1.5m'`, `'1h'` or `'2d'` (the convention of `@nestjs/locks` and `ms`).
 */
export type Duration = number | `${number}${keyof typeof UNIT_MS}`;

const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

export const DURATION_EXPECTED = "a number of milliseconds or a duration string such as '500ms', '30s', '5m', '1h' or '2d'";

/**
 * The milliseconds of `value`, or `value` itself when it is not a duration string (numbers,
 * and anything else, are left for the range check of the option that takes them, so that a
 * bad number is reported with that option's range).
 *
 * @throws InvalidLockOptionsError naming `option` for a string that is not a duration.
 */
export function toMilliseconds(value: unknown, option: string): unknown {
  if (typeof value !== 'string') return value;
  const match = PATTERN.exec(value);
  if (match === null) throw new InvalidLockOptionsError(option, value, DURATION_EXPECTED);
  // Rounded: '1.5s' is 1500 ms, and no timer can wait a fraction of a millisecond.
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

/**
 * Parses and range-checks one duration option: an integer number of milliseconds from `min`
 * to `max` once converted.
 *
 * @throws InvalidLockOptionsError naming `option`.
 */
export function parseDuration(value: unknown, option: string, min: number, max: number, extra = ''): number {
  const ms = toMilliseconds(value, option);
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < min || ms > max) {
    throw new InvalidLockOptionsError(option, value, `${DURATION_EXPECTED}, from ${min} to ${max} ms${extra}`);
  }
  return ms;
}
