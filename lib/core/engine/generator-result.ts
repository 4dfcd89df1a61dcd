import { RedisLockError } from '../../errors/redis-lock.error.js';

/** A generator object, sync or async (a lazy body); not other iterators (a Map's values: already there). */
export function isGenerator(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const tag = Object.prototype.toString.call(value);
  return tag === '[object Generator]' || tag === '[object AsyncGenerator]';
}

/** Closes a generator nobody will iterate; its body never ran, so this runs no code of it. */
export function closeGenerator(value: unknown): void {
  void Promise.resolve((value as { return?: () => unknown }).return?.()).catch(() => undefined);
}

/**
 * `fn`'s result, unless it is a generator: its body would run as it is iterated, after `using()`
 * gave the lock back. Refused (and closed, its body never run), naming the call.
 */
export function refuseGenerator<T>(result: T, where: string): T {
  if (!isGenerator(result)) return result;
  closeGenerator(result);
  throw new RedisLockError(`${where}: fn returned a generator, whose body runs as it is iterated, after the lock was given back; return an array, a Promise or a value, or iterate inside fn.`);
}
