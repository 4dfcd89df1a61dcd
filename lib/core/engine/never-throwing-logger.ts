import type { LockLogger } from './lock-logger.js';

/**
 * `logger` with every call guarded: the application's logger may throw (a custom `LoggerService`
 * reading an argument it did not get, a transport whose stream closed), and a log line is never
 * worth a lock step left undone (a holder not told of its loss, a release not sent at shutdown).
 */
export function neverThrowingLogger(logger: LockLogger): LockLogger {
  const guard =
    (log: (message: string, stack?: string) => void) =>
    (message: string, stack?: string): void => {
      try {
        log(message, stack);
      } catch {
        // A logger that throws cannot be told either.
      }
    };
  return {
    // No second argument without a stack: a logger would print it as one.
    error: guard((message, stack) => (stack === undefined ? logger.error(message) : logger.error(message, stack))),
    warn: guard((message) => logger.warn(message)),
    debug: logger.debug === undefined ? undefined : guard((message) => logger.debug!(message)),
  };
}
