/** One recorded event of a history; see checker.mjs for every kind and its fields. */
export interface HistoryEvent {
  ev: string;
  t?: number;
  [field: string]: unknown;
}

export interface History {
  events: HistoryEvent[];
  /** When the last fault ended (CLOCK_MONOTONIC ms): waits that begin a ttl later must succeed. */
  quietAt?: number;
  ttl?: number;
  /** On a Cluster: the master (a fault's `node`) holding the lock's key and a job's owner lease. */
  placement?: { lock: number; owner: number };
  /** The grant lease and a waiter's liveness lease (ms, default 1 000): with the ttl, how long a lost command's leftovers may live. */
  graceMs?: number;
  /** The schedule run: its `target` (a quorum's single restarts lose no lock) and the rest. */
  schedule?: { target?: string; [field: string]: unknown };
}

export interface Violation {
  invariant:
    | 'history'
    | 'exclusion'
    | 'reader-writer'
    | 'semaphore-limit'
    | 'unique-token'
    | 'token-order'
    | 'job-once'
    | 'fencing'
    | 'register-monotonic'
    | 'liveness'
    | 'false-loss'
    | 'leader-told'
    | 'close-bound'
    | 'store-leftover'
    | 'semaphore-count'
    | 'unhandled-rejection'
    | 'told-after-release'
    | 'left-alive-after-close'
    | 'copy-deleted-while-held'
    | 'inspect-token'
    | 'lease-outlasted'
    | 'told-of-deletion'
    | 'free-refused';
  message: string;
  at: number | undefined;
  /**
   * The shape of the violation: `held-up-claim`, a tick ran twice, the later run from a call
   * made on time whose claim of the owner lease was held up; `stale-grant`, a holder entered on thawing from a freeze
   * with a lower token than one already inside; `lease-release-unbounded`, a close held up past its
   * shutdownTimeout (twice it: its two phases) while Redis was out of reach by a worker that ran a job or led (a defect since fixed);
   * `quorum-copy-deleted`, quorum mode: a master granted the later holder within the lease of the earlier one's copy there
   * (not restarted in between), after a release of the earlier holder's own token had deleted that copy.
   */
  cause?: 'held-up-claim' | 'stale-grant' | 'lease-release-unbounded' | 'quorum-copy-deleted';
}

/** The violations of the library's promises in `history` (none: an empty list). */
export function check(history: History): Violation[];

/** The worker (instance name) an owner token names, if any. */
export function tokenOwner(token: string): string | undefined;

/** The history as readable lines (`+ms process event fields`), ordered by time. */
export function trace(history: History): string[];
