/** The part of a logger the core needs; Nest's `Logger` fits it. */
export interface LockLogger {
  /** `stack`: of the error logged, where there is one (as Nest's `Logger.error(message, stack)` takes it). */
  error(message: string, stack?: string): void;
  warn(message: string): void;
  debug?(message: string): void;
}
