/**
 * Base class of every error this library throws, so that callers can tell lock problems
 * apart from their own errors with one `instanceof` check.
 *
 * @example
 * ```ts
 * try {
 *   await locks.using('invoice:42', () => bill());
 * } catch (err) {
 *   if (err instanceof RedisLockError) reportLockTrouble(err);
 *   else throw err;
 * }
 * ```
 */
export class RedisLockError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
