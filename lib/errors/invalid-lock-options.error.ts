import { quoteText } from '../core/keys/quote-key.js';
import { shownKind } from '../core/keys/shown-kind.js';
import { RedisLockError } from './redis-lock.error.js';

/**
 * An option has a value the library cannot work with. The message names the option and the
 * value, and says what is allowed. Module options are checked when the application starts,
 * per-call options when the call is made.
 *
 * @example
 * ```ts
 * RedisLockModule.forRoot({ redis: url, ttl: -1 });
 * // InvalidLockOptionsError: Option "ttl" must be a number of milliseconds or a duration
 * // string such as '500ms', '30s', '5m', '1h' or '2d', from 100 to 31536000000 ms, got -1.
 * ```
 */
export class InvalidLockOptionsError extends RedisLockError {
  /**
   * The value that was rejected. Not enumerable: loggers print an error's own enumerable
   * properties (Nest's, when it logs a failed startup; JSON loggers), and a `redis` value may
   * carry a password (a URL, options, a client). The message shows the value safely.
   */
  declare readonly value: unknown;

  constructor(
    /** The option's name, e.g. `ttl` or `redis`. */
    readonly option: string,
    value: unknown,
    /** What the option accepts. */
    private readonly expected: string,
    /** Where the option was given, e.g. `@Locked on OrdersService.pay`. */
    readonly where?: string,
    /** `cause`: what reading the option threw (a getter of the options, a Proxy). */
    errorOptions?: ErrorOptions,
  ) {
    super(`${where ? `${where}: ` : ''}Option ${showName(option)} must be ${expected}, got ${show(value)}.`, errorOptions);
    Object.defineProperty(this, 'value', { value, enumerable: false });
  }

  /** The same error, saying where the option was given. */
  within(where: string): InvalidLockOptionsError {
    return new InvalidLockOptionsError(this.option, this.value, this.expected, where, 'cause' in this ? { cause: this.cause } : undefined);
  }
}

/**
 * An option's name: as it is when it is short printable ASCII (every name the library gives, such
 * as `redis[1]` or `routeMetadata["design:paramtypes"]`); else quoted, escaped and cut as a string
 * value is. A name that is no option comes from the options object, which may be spread from input
 * (`{ ...defaults, ...req.query }`): raw, it carried line breaks and controls into the log line of
 * the error, and a 100 KB name made a 100 KB message.
 */
function showName(option: string): string {
  return /^[\x20-\x7e]{1,80}$/.test(option) ? `"${option}"` : quoteText(option, 60);
}

function show(value: unknown): string {
  if (typeof value === 'string') return quoteText(value, 60);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // As written in code: shown bare, 5000n reads as the valid number it was refused beside.
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return `a function`;
  if (Array.isArray(value)) return `an array`;
  return shownKind(value);
}
