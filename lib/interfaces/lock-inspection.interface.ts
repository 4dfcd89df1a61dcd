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

/** One holder of a semaphore's permits, as `inspect()` found it. */
export interface SemaphorePermitHolder {
  /** How many of the semaphore's permits this acquisition holds. */
  permits: number;
  /** The fencing token of this acquisition. */
  fencingToken: number;
  /** Milliseconds until its permits expire unless renewed; -1 when its key has no expiry (it never frees on its own). */
  ttlMs: number;
  /** Who holds them; `undefined` when the holder does not record it. Escape its text before showing it. */
  holder?: LockHolder;
}

/**
 * A semaphore (a key used with `limit`) as `inspect()` found it: present only while it has
 * holders or waiters.
 */
export interface SemaphoreInspection {
  /** The limit it is in use with (the one every caller must give); `undefined` if none is stored. */
  limit?: number;
  /** Permits held now, by all holders together. */
  used: number;
  /** Each live acquisition holding permits, oldest first (by fencing token). */
  holders: SemaphorePermitHolder[];
  /** How many callers wait in the semaphore's queue. */
  waiters: number;
}

/**
 * What `LockService.inspect()` found about one lock: a snapshot, stale as soon as read.
 * `held`, `ttlMs`, `holder` and `waiters` describe the lock of that key (a mutex, or the write
 * side of a read-write lock); the semaphore of the same name, when in use, is under `semaphore`.
 */
export interface LockInspection {
  /** The key as given (without the prefix). */
  key: string;
  /** Whether someone holds the lock. */
  held: boolean;
  /**
   * Milliseconds until the lease expires unless renewed; `undefined` when not held; -1, as Redis'
   * `PTTL` says it, when the lock's key has no expiry (written by something other than this
   * library, or `PERSIST`ed): it never frees on its own, and only `release()` by its holder or a
   * forced release ends it.
   */
  ttlMs?: number;
  /**
   * The key's fencing counter: the token of its latest acquisition; `undefined` when the lock was
   * never acquired (or its counter is gone, or holds `0`, set by hand: no token, and the next
   * acquisition starts it at the clock as it does a lost one). Usually the holder's token while held, but not a
   * proof of it: the counter is shared with the key's readers and its same-named semaphore, whose
   * acquisitions raise it too, and a counter Redis lost (a restart without persistence, an
   * eviction, a failover to a replica that missed it) is seeded again from the clock. Compare
   * tokens at the resource (see `FencedRedis`), never against this field.
   */
  fencingToken?: number;
  /** How many callers wait in the lock's queue (always 0 in quorum mode, where nobody queues). */
  waiters: number;
  /**
   * Who holds it; `undefined` when not held, when readers hold it (see `readers`), or when the
   * holder is a version of this library that does not record it.
   */
  holder?: LockHolder;
  /**
   * While readers hold the lock (acquired with `mode: 'read'`): how many of them hold it now
   * (readers that crashed, whose lease ran out, not counted). `holder` is then `undefined`: each
   * reader is an acquisition of its own, and `ttlMs` is the longest lease they have left.
   * `undefined` when the lock is free or a writer (or a plain lock) holds it.
   *
   * @example
   * const { held, readers } = await locks.inspect('catalog');
   * if (held && readers !== undefined) console.log(`read by ${readers} reader(s)`);
   */
  readers?: number;
  /**
   * The semaphore of that key (acquired with `limit`), while it has holders or waiters:
   * its holders, permits used, limit and waiters. `undefined` otherwise, and in quorum mode
   * (which has no semaphores).
   */
  semaphore?: SemaphoreInspection;
}
