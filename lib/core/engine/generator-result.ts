import { RedisLockError } from '../../errors/redis-lock.error.js';

/**
 * A generator object, sync or async (a lazy body); not other iterators (a Map's values: already
 * there). Also what a compiler builds for a generator method when it targets an older
 * JavaScript (TypeScript's `__generator` / `__asyncGenerator` for ES5 / ES2017, Babel's and SWC's
 * wrappers): a plain object that is its own iterator with `next`, `throw` and `return`, which a
 * stream, an array's or a Map's iterator, or a Subject is not.
 */
export function isGenerator(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const tag = Object.prototype.toString.call(value);
  if (tag === '[object Generator]' || tag === '[object AsyncGenerator]') return true;
  const shape = value as Record<PropertyKey, unknown>;
  try {
    return (
      typeof shape.next === 'function' &&
      typeof shape.throw === 'function' &&
      typeof shape.return === 'function' &&
      (typeof shape[Symbol.asyncIterator] === 'function' || typeof shape[Symbol.iterator] === 'function')
    );
  } catch {
    // A Proxy that throws on a name it does not know (an assertion library's result): no generator.
    return false;
  }
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
