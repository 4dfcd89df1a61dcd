import type { LockManager } from '../core/engine/lock-manager.js';
import { shutDownRefusal } from '../errors/shutdown-reason.js';

/**
 * Aborts once `app.close()` has given back every lock of `manager` (its first phase, within
 * `shutdownTimeout`), for the injected `FencedRedis`, which writes on the module's connection:
 * Nest waits for the HTTP requests in flight before the shutdown hook that closes that
 * connection, so a write a frozen Redis left unanswered would hold `app.close()` up for as long
 * as Redis stays frozen. Its calls stop waiting then (their locks are given back: a write still
 * to come is one no lock covers any more).
 */
export function locksGivenBack(manager: LockManager): AbortSignal {
  const given = new AbortController();
  // The phase aborts `closing` before `stop()` keeps its promise: asked at once, it would start a second one.
  const ended = (): void => queueMicrotask(() => void manager.stop().finally(() => given.abort(shutDownRefusal('LockService shut down (the application is closing): its locks were given back.'))));
  if (manager.closing.aborted) ended();
  else manager.closing.addEventListener('abort', ended, { once: true });
  return given.signal;
}
