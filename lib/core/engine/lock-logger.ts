/** The part of a logger the core needs; Nest's `Logger` fits it. */
export interface LockLogger {
  error(message: string): void;
  warn(message: string): void;
  debug?(message: string): void;
}
