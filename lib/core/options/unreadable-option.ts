import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { RedisLockError } from '../../errors/redis-lock.error.js';
import { thrownText } from '../engine/thrown-text.js';
import { quoteText } from '../keys/quote-key.js';

/**
 * What reading `options` threw, as the refusal of the option it came from: a config class's
 * getter that throws, a Proxy over a strict config object. Passed on as it was, the user's error
 * named neither the call nor the option. Found on the failure path only, by reading the options
 * again (`names`, the options a call takes): the common path pays nothing for it. An error the
 * library made, or one no read of the options throws again, is returned as it is.
 */
export function unreadableOption(error: unknown, options: unknown, names: Iterable<string>): unknown {
  if (error instanceof RedisLockError || options === null || typeof options !== 'object') return error;
  const option = unreadableName(options, names);
  if (option === undefined) return error;
  return new InvalidLockOptionsError(option, error, `readable: reading it threw ${quoteText(thrownText(error), 100)}`, undefined, { cause: error });
}

function unreadableName(options: object, names: Iterable<string>): string | undefined {
  // What every check does with the object itself: list its names, ask its kind, look for a `then`.
  try {
    for (const name in options) void name;
    Object.getPrototypeOf(options);
    void (options as { then?: unknown }).then;
  } catch {
    return 'options';
  }
  for (const name of names) {
    try {
      void (options as Record<string, unknown>)[name];
    } catch {
      return name;
    }
  }
  return undefined;
}
