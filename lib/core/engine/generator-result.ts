import { isObservable } from 'rxjs';
import { RedisLockError } from '../../errors/redis-lock.error.js';

/**
 * A generator object, sync or async (a lazy body); not other iterators (a Map's values: already
 * there). Also what a compiler builds for a generator method when it targets an older
 * JavaScript (TypeScript's `__generator` / `__asyncGenerator` for ES5 / ES2017, Babel's and SWC's
 * wrappers): a plain object with `next`, `throw` and `return` and an iterator method of its own,
 * which a stream, an array's or a Map's iterator or a Subject is not. A live iterator of that
 * shape (`events.on()`'s) is refused too: a body run unlocked cannot be told from it, and is the
 * worse mistake.
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
      // Their own property: the compilers' helpers set it on the object they build, where a live
      // iterator (events.on(), a GraphQL subscription's) inherits it from its prototype.
      (Object.hasOwn(value, Symbol.asyncIterator) || Object.hasOwn(value, Symbol.iterator))
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
 * gave the lock back (or, for `runAsLeader()`'s work, outside the term, whose lease may be given
 * back under it). Refused (and closed, its body never run), naming the call. So is an
 * Observable: its work runs when it is subscribed, which is after `using()` resolved with it
 * (`HttpService.post()`, a `ClientProxy.send()`); unlike `@Locked`, `using()` returns a Promise of
 * `fn`'s result and has no stream to hold the lock along.
 */
export function refuseGenerator<T>(result: T, where: string, fn = 'fn', after = 'after the lock was given back'): T {
  if (observable(result)) {
    throw new RedisLockError(`${where}: ${fn} returned an Observable, whose work runs when it is subscribed, ${after}; return lastValueFrom(observable) (or firstValueFrom), or use a @Locked method declared to return an Observable (held until it completes).`);
  }
  if (!isGenerator(result)) return result;
  closeGenerator(result);
  throw new RedisLockError(`${where}: ${fn} returned a generator (or an iterator of a generator's shape, as a compiled generator function's), whose items come as it is iterated, ${after}; return an array, a Promise or a value, or iterate inside ${fn}.`);
}

/** Whether `value` is an Observable; a Proxy that throws on a name it does not know is none. */
function observable(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  try {
    return isObservable(value);
  } catch {
    return false;
  }
}
