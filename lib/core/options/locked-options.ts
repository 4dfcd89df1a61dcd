import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { LockedOptions } from '../../interfaces/locked-options.interface.js';
import { toMilliseconds } from '../time/duration.js';
import { DEFAULT_TTL_MS, DEFAULT_WAIT_TIMEOUT_MS, checkOptionsObject, resolveLockOptions } from './lock-options.js';
import type { OnBusy } from '../engine/locked-call.js';
import { resolveSemaphoreOptions } from '../semaphore/semaphore-options.js';
import { isReadMode } from '../rwlock/lock-mode.js';
import { resolveFairness } from './fairness-option.js';
import { unreadableOption } from './unreadable-option.js';
import { optionsReadByName } from './options-read-by-name.js';

/**
 * The names `@Locked` takes. A misspelt one (`waitTimout`) passes TypeScript when the options are
 * a shared constant, and would be dropped without a word: the call would wait the module's
 * `waitTimeout` where the caller meant not to wait.
 */
const LOCKED_OPTION_NAMES = ['ttl', 'renewInterval', 'waitTimeout', 'autoRenew', 'limit', 'permits', 'mode', 'fairness', 'fencing', 'onBusy'] as const satisfies readonly (keyof LockedOptions)[];
const LOCKED_OPTIONS = new Set<string>(LOCKED_OPTION_NAMES);
// Every option of the interface is listed: one added there and not here would be refused as unknown.
export const EVERY_LOCKED_OPTION_LISTED: [Exclude<keyof LockedOptions, (typeof LOCKED_OPTION_NAMES)[number]>] extends [never] ? true : never = true;

/**
 * Checks `@Locked` options when the class is defined, so that a bad value fails at startup
 * rather than on the first call. The values are checked again against the module's defaults
 * at call time.
 */
export function checkLockedOptions(options: LockedOptions | undefined, where: string): OnBusy {
  if (options === undefined) return 'throw';
  try {
    checkOptionsObject(options);
    for (const name of Object.keys(options)) {
      if (!LOCKED_OPTIONS.has(name)) {
        throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], `left out: it is no option of @Locked (its options are ${LOCKED_OPTION_NAMES.join(', ')})`);
      }
    }
    const { onBusy = 'throw' } = options;
    const timing = lockOptionsOf(options);
    if (onBusy !== 'throw' && onBusy !== 'skip') {
      throw new InvalidLockOptionsError('onBusy', onBusy, '"throw" or "skip"');
    }
    // The module defaults are not known yet; any valid stand-in checks the ranges.
    const renewInterval = toMilliseconds(timing.renewInterval, 'renewInterval');
    const ttl = Math.max(DEFAULT_TTL_MS, (typeof renewInterval === 'number' ? renewInterval : 0) * 2);
    const semaphore = resolveSemaphoreOptions(timing) !== undefined;
    resolveFairness(timing.fairness, 'fifo', { semaphore, read: isReadMode(timing) });
    resolveLockOptions(timing, { ttl, renewInterval: Math.floor(ttl / 3), waitTimeout: DEFAULT_WAIT_TIMEOUT_MS, autoRenew: true });
    return onBusy;
  } catch (error) {
    const refused = unreadableOption(error, options, LOCKED_OPTION_NAMES);
    if (refused instanceof InvalidLockOptionsError) throw refused.within(`@Locked on ${where}`);
    throw refused;
  }
}

/**
 * The lock options of `@Locked`'s options, read by name as a call reads its own (see
 * `optionsReadByName`), without `onBusy`, which is no lock option.
 */
export function lockOptionsOf(options: LockedOptions | undefined): Omit<LockedOptions, 'onBusy'> {
  if (options === undefined) return {};
  const { onBusy: _, ...lockOptions } = optionsReadByName(options, LOCKED_OPTION_NAMES);
  return lockOptions;
}
