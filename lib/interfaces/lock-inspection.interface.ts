/**
 * The process holding a lock, as recorded in the lock's owner token when it was acquired.
 * Every text field comes from the holder's process and may be anything: escape it before
 * showing it.
 */
export interface LockHolder {
  /** Host name of the holder's machine (`os.hostname()`, at most 64 characters). */
  host: string;
  /** Process id of the holder. */
  pid: number;
  /** The holder's `instanceName` module option, when set. */
  instance?: string;
  /**
   * What holds it: `Class.method` for a `@Locked` method, else the `label` (or `name`) given to
   * `acquire()` / `using()`. At most 64 characters, control characters replaced by spaces.
   */
  label?: string;
  /**
   * When the holder's `acquire()` call started (`Date.now()` of the holder's clock). A holder
   * that had to wait got the lock later than this.
   */
  since: number;
}

/** What `LockService.inspect()` found about one lock: a snapshot, stale as soon as read. */
export interface LockInspection {
  /** The key as given (without the prefix). */
  key: string;
  /** Whether someone holds the lock. */
  held: boolean;
  /** Milliseconds until the lease expires unless renewed; `undefined` when not held. */
  ttlMs?: number;
  /**
   * The fencing token of the lock's latest acquisition (the holder's, when held); `undefined`
   * when the lock was never acquired.
   */
  fencingToken?: number;
  /** How many callers wait in the lock's queue (always 0 in quorum mode, where nobody queues). */
  waiters: number;
  /**
   * Who holds it; `undefined` when not held, or when the holder is a version of this library
   * that does not record it.
   */
  holder?: LockHolder;
}
