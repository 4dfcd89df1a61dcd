// What a store's acquire and release calls name and answer, for every lock kind.

/** The Redis names a script call needs. */
export interface ScriptKeys {
  lock: string;
  fence: string;
  queue: string;
  waiters: string;
  released: string;
}

/**
 * Outcome of one acquire attempt. A busy reply may carry `fence`, the key's fencing counter when
 * the attempt ran: every grant the caller could still be sent with a token up to it was made
 * before that attempt and did not survive it (the attempt would have found the caller holding).
 */
export type AcquireReply = { acquired: true; fencingToken: number } | { acquired: false; pttl: number; fence?: number };

/** A lock a release handed to a waiter. */
export interface Grant {
  token: string;
  fencingToken: number;
}

/** Outcome of a release: whether we held it, and the waiter it was handed to. */
export interface ReleaseReply {
  released: boolean;
  grant?: Grant;
}
