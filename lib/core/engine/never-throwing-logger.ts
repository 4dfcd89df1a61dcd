import type { LockLogger } from './lock-logger.js';

/**
 * `logger` with every call guarded: the application's logger may throw (a custom `LoggerService`
 * reading an argument it did not get, a transport whose stream closed), and a log line is never
 * worth a lock step left undone (a holder not told of its loss, a release not sent at shutdown).
 */
export function neverThrowingLogger(logger: LockLogger): LockLogger {
  const guard =
    (log: (message: string) => void) =>
    (message: string): void => {
      try {
        log(message);
      } catch {
        // A logger that throws cannot be told either.
      }
    };
  return {
    error: guard((message) => logger.error(message)),
    warn: guard((message) => logger.warn(message)),
    debug: logger.debug === undefined ? undefined : guard((message) => logger.debug!(message)),
  };
}
