/**
 * One release of a held lock, from its start to its outcome: what its reply is checked against,
 * the callbacks of a `releaseThen()` caller, and a promise for the callers that await it.
 *
 * The promise is made only when someone asks for it (`release()`, a second caller, shutdown):
 * every `@Locked` call releases through callbacks, and a promise per release (with its resolve
 * and reject, and the closures around them) was measurable there (bench/NOTES.md, "What the
 * bounded release costs").
 */
export class ReleaseInFlight {
  /** Its reply came, or it failed for want of one: a later reply is too late to tell. */
  answered = false;
  /** Shutdown's give-back of a lock its holder still had: it resolves whatever Redis answers. */
  atShutdown = false;
  private shared?: Promise<void>;
  private resolveShared?: () => void;
  private rejectShared?: (error: unknown) => void;
  /** How it ended, for a promise asked for afterwards: `null` released, else the error. */
  private outcome?: { error: unknown } | null;

  constructor(
    /** Whether the lock was held as the release began (not lost, not given back at shutdown). */
    readonly wasHeld: boolean,
    /** The store's connection resets as it was sent (see `LockStore.connectionResets`). */
    readonly resets: number | undefined,
    // Dropped once called: they hold the `@Locked` call's result, which a released lock (kept
    // by whatever the call left behind: a timer, a cached promise) must not keep alive.
    private onReleased?: () => void,
    private onFailed?: (error: unknown) => void,
  ) {}

  /** The promise its awaiting callers share, made on first request. */
  promise(): Promise<void> {
    if (this.shared !== undefined) return this.shared;
    if (this.outcome === null) return (this.shared = Promise.resolve());
    if (this.outcome !== undefined) return (this.shared = Promise.reject(this.outcome.error));
    return (this.shared = new Promise<void>((resolve, reject) => {
      this.resolveShared = resolve;
      this.rejectShared = reject;
    }));
  }

  /** Released: the callback, then the promise (if anyone asked for it). */
  released(): void {
    this.outcome = null;
    const onReleased = this.onReleased;
    this.onReleased = this.onFailed = undefined;
    onReleased?.();
    this.settleShared();
  }

  /**
   * Failed: a `releaseThen()` caller hears it by its callback, and the promise rejects only for
   * callers that awaited it besides (`shared`): shutdown, which only waits, sees it resolve.
   */
  failed(error: unknown, shared: boolean): void {
    const onFailed = this.onFailed;
    this.onReleased = this.onFailed = undefined;
    this.outcome = onFailed === undefined || shared ? { error } : null;
    onFailed?.(error);
    this.settleShared();
  }

  private settleShared(): void {
    const resolve = this.resolveShared;
    const reject = this.rejectShared;
    this.resolveShared = this.rejectShared = undefined;
    if (this.outcome === null) resolve?.();
    else if (this.outcome !== undefined) reject?.(this.outcome.error);
  }
}
