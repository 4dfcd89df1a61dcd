import { quoteKey } from '../core/keys/quote-key.js';
import { RedisLockError } from './redis-lock.error.js';

/**
 * Two scheduled jobs or leader elections would use the same Redis lock: the same key (a key
 * given on a method that two provided subclasses inherit included), one's key equal to
 * another's `<key>:owner` lease (two classes of one name in two modules included, each then
 * named with its module), or one class with job methods provided twice (two instances
 * under two tokens). Thrown when the application starts. Give one of them another `key`, or
 * provide the class once (a second token can name the same instance with `useExisting`).
 *
 * @example
 * ```ts
 * // DuplicateLockKeyError: Lock key "cleanup" is used by both ReportsService.cleanup
 * // (@WithoutOverlapping) and UsersService.cleanup (@WithoutOverlapping). Give one of them
 * // another key.
 * ```
 */
export class DuplicateLockKeyError extends RedisLockError {
  constructor(
    /** The lock key both use. */
    readonly key: string,
    /** Where it is used first, e.g. `ReportsService.cleanup (@WithoutOverlapping)`. */
    readonly first: string,
    /** Where it is used again. */
    readonly second: string,
    /** What to do about it; one class provided twice needs another remedy than two classes. */
    advice = 'Give one of them another key.',
  ) {
    super(`Lock key ${quoteKey(key)} is used by both ${first} and ${second}. ${advice}`);
  }
}
